//! HTTPS in process (feature `tls`): rustls on the `ring` provider.
//!
//! A connection's TLS step runs in [`server`](crate::server)'s start-up, after the
//! PROXY header and before HTTP: a bounded handshake ([`accept`]), then the connection
//! loop over the encrypted stream ([`stream`]). The certificate lives in a store that
//! SIGHUP reloads ([`certs`], [`reload`]).

mod accept;
mod certs;
mod redirect;
mod reload;
mod settings;
mod setup;
mod stream;

pub(crate) use accept::Acceptor;
pub(crate) use certs::CertStore;
pub use redirect::HttpsRedirect;
pub(crate) use reload::reload_on_sighup;
pub use settings::Tls;
pub(crate) use setup::Loaded;
