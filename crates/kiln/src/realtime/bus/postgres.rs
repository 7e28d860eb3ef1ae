//! The bus across processes: [`Bus::postgres`] and what it creates in the database.

use std::sync::Arc;

use super::{BUS_WINDOW, Bus, Delivery, Message, Shared};

/// How a bus across processes is set up on PostgreSQL: the `LISTEN`/`NOTIFY`
/// channel, the table that holds payloads too large for `NOTIFY`, and the window
/// each worker keeps. A channel name alone (`"chat"`) is one with the defaults.
///
/// ```no_run
/// # fn main() -> Result<(), kiln::db::Error> {
/// use kiln::realtime::{Bus, PostgresBus};
///
/// let db = kiln::db::Database::open("postgres://localhost/app", kiln::db::Options::default())?;
/// // The table `realtime.chat_messages` and the sequence `realtime.chat_messages_ids`.
/// let bus = Bus::postgres(&db, PostgresBus::new("chat").table("realtime.chat_messages").window(512))?;
/// # let _ = bus;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresBus {
    channel: String,
    table: Option<String>,
    window: usize,
}

impl PostgresBus {
    /// The bus on `channel`: a lower-case SQL identifier of at most 40 bytes (letters,
    /// digits and `_`, not starting with a digit).
    pub fn new(channel: &str) -> PostgresBus {
        PostgresBus { channel: channel.to_owned(), table: None, window: BUS_WINDOW }
    }

    /// Keeps the payloads too large for `NOTIFY` in the table `name` instead of
    /// `{channel}_payloads`, and takes ids from the sequence `{name}_ids` instead of
    /// `{channel}_ids`. `name` is a lower-case SQL identifier of at most 59 bytes,
    /// optionally after a schema (`realtime.chat`); [`Bus::postgres`] refuses any other.
    pub fn table(mut self, name: &str) -> PostgresBus {
        self.table = Some(name.to_owned());
        self
    }

    /// Keeps `messages` per topic on each worker instead of [`BUS_WINDOW`] (at least 1).
    pub fn window(mut self, messages: usize) -> PostgresBus {
        self.window = messages.max(1);
        self
    }
}

impl From<&str> for PostgresBus {
    fn from(channel: &str) -> PostgresBus {
        PostgresBus::new(channel)
    }
}

impl From<&String> for PostgresBus {
    fn from(channel: &String) -> PostgresBus {
        PostgresBus::new(channel)
    }
}

impl From<String> for PostgresBus {
    fn from(channel: String) -> PostgresBus {
        PostgresBus { channel, table: None, window: BUS_WINDOW }
    }
}

impl Bus {
    /// A bus across every process that runs it on this PostgreSQL database, through
    /// `LISTEN`/`NOTIFY` on a channel (one dedicated connection per process, which
    /// reconnects with backoff; see [`kiln_db::Notifier`]). On SQLite, use [`Bus::new`].
    ///
    /// ```no_run
    /// # fn main() -> Result<(), kiln::db::Error> {
    /// let db = kiln::db::Database::open("postgres://localhost/app", kiln::db::Options::default())?;
    /// let bus = kiln::realtime::Bus::postgres(&db, "chat")?;
    /// # let _ = bus;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// **What it creates.** When its connection starts, the link creates, if missing,
    /// two objects in the database (the role needs `CREATE` on the schema, or an
    /// operator makes them first with the same statements):
    ///
    /// ```sql
    /// CREATE SEQUENCE IF NOT EXISTS chat_ids;  -- message ids, growing across processes
    /// CREATE TABLE IF NOT EXISTS chat_payloads (
    ///     id bigint PRIMARY KEY, topic text NOT NULL, payload text NOT NULL,
    ///     created timestamptz NOT NULL DEFAULT now()
    /// );
    /// ```
    ///
    /// The table holds only payloads too large for a `NOTIFY` (about 7,900 bytes with
    /// the topic); rows older than ten minutes are deleted each time a link connects.
    /// Name them with [`PostgresBus::table`] (`{table}` and `{table}_ids`) to keep
    /// them apart from the app's tables, or in a schema of their own. The link's
    /// connection is named `kiln_bus:{channel}` in `pg_stat_activity`.
    ///
    /// An invalid channel or table name is refused with [`kiln_db::Error::Open`],
    /// saying which; so is a database that is not PostgreSQL.
    pub fn postgres(db: &kiln_db::Database, bus: impl Into<PostgresBus>) -> Result<Bus, kiln_db::Error> {
        let PostgresBus { channel, table, window } = bus.into();
        let shared = Arc::new(Shared::new(window));
        // The link holds the bus weakly: dropping the last `Bus` stops the link.
        let weak = Arc::downgrade(&shared);
        let deliver = move |notice| {
            let Some(shared) = weak.upgrade() else { return };
            let delivery = match notice {
                kiln_db::Notice::Message { id, topic, payload } => {
                    Delivery::Message(Message { id, topic: topic.into(), payload: payload.into() })
                }
                kiln_db::Notice::Gap => Delivery::Gap,
            };
            shared.deliver_all(&delivery);
        };
        let link = match &table {
            Some(table) => db.notifier_with_table(&channel, table, deliver)?,
            None => db.notifier(&channel, deliver)?,
        };
        let _ = shared.link.set(link);
        Ok(Bus { shared })
    }
}
