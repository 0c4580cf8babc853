//! ioscope's run history: an SQLite database (WAL mode, a versioned schema migrated in
//! place) with a row for every run, sweep point or comparison repetition recorded in
//! it — when, where (host, kernel, devices), what (the resolved job, the command, a
//! label) and the results (summary columns and the whole json+ document). It is an
//! index: the results stay in their files too.
//!
//! - [`store`]: opening (refusing a file that is not ours or is newer), the schema.
//! - [`record`]: what a row holds, and writing one.
//! - [`query`]: selecting rows by label, id or time, and reading them back.

pub mod error;
pub mod query;
pub mod record;
pub mod store;

pub use error::HistoryError;
pub use query::{Selector, Summary};
pub use record::Record;
pub use store::{default_path, History, SCHEMA_VERSION};
