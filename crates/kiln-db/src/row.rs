//! One row of a result, read by column name into the app's types.

use crate::error::Error;
use crate::value::{FromValue, Value};

/// Where a row's values come from.
pub(crate) trait RowSource {
    /// The column's position, by name.
    fn index_of(&self, name: &str) -> Option<usize>;
    /// How many columns the row has.
    fn len(&self) -> usize;
    /// The value at `index`, or why it cannot be read.
    fn value(&self, index: usize) -> Result<Value<'_>, String>;
    /// Every column's name, for the message when one is missing.
    fn names(&self) -> Vec<String>;
}

/// One row of a result. [`FromRow`] implementations read it with [`get`](Self::get).
pub struct Row<'a> {
    source: &'a dyn RowSource,
}

impl std::fmt::Debug for Row<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Row").field("columns", &self.source.names()).finish()
    }
}

impl<'a> Row<'a> {
    pub(crate) fn new(source: &'a dyn RowSource) -> Self {
        Row { source }
    }

    /// The column `name` decoded as `T`; an error names the column and says what
    /// did not match (or lists the columns there are, when there is no such column).
    pub fn get<T: FromValue>(&self, name: &str) -> Result<T, Error> {
        let index = self.source.index_of(name).ok_or_else(|| {
            Error::decode(name, format!("no such column; the row has {}", self.source.names().join(", ")))
        })?;
        let value = self.source.value(index).map_err(|e| Error::decode(name, e))?;
        T::from_value(value).map_err(|e| Error::decode(name, e))
    }

    /// The column at `index` (from 0) decoded as `T`.
    pub fn get_at<T: FromValue>(&self, index: usize) -> Result<T, Error> {
        let column = || format!("#{index}");
        if index >= self.source.len() {
            return Err(Error::Decode {
                column: column(),
                message: format!("the row has only {} columns", self.source.len()),
            });
        }
        let value = self.source.value(index).map_err(|e| Error::Decode { column: column(), message: e })?;
        T::from_value(value).map_err(|e| Error::Decode { column: column(), message: e })
    }

    /// Whether the row has a column of this name.
    pub fn contains(&self, name: &str) -> bool {
        self.source.index_of(name).is_some()
    }

    /// How many columns the row has.
    pub fn len(&self) -> usize {
        self.source.len()
    }

    /// Whether the row has no column at all.
    pub fn is_empty(&self) -> bool {
        self.source.len() == 0
    }
}

/// A type built from one row of a result.
///
/// Derive it (`#[derive(FromRow)]`) to read each field from the column of the same
/// name; `#[from_row(rename = "col")]` reads another column. Tuples read their
/// columns by position.
///
/// ```
/// use kiln_db::{FromRow, Row, Error};
///
/// struct User { id: i64, name: String, email: Option<String> }
///
/// impl FromRow for User {
///     fn from_row(row: &Row<'_>) -> Result<Self, Error> {
///         Ok(User { id: row.get("id")?, name: row.get("name")?, email: row.get("email")? })
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read from a database row",
    note = "derive it with `#[derive(kiln::db::FromRow)]`, or read a tuple of columns such as `(i64, String)`"
)]
pub trait FromRow: Sized {
    /// Builds a value from `row`.
    fn from_row(row: &Row<'_>) -> Result<Self, Error>;
}

macro_rules! tuples {
    ($(($($t:ident $i:tt),+))*) => {$(
        impl<$($t: FromValue),+> FromRow for ($($t,)+) {
            fn from_row(row: &Row<'_>) -> Result<Self, Error> {
                Ok(($(row.get_at::<$t>($i)?,)+))
            }
        }
    )*};
}
tuples! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
}
