//! The cook report (stub; the import work fills this in).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CookReport {}
