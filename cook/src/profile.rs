//! Quality profiles (stub; the import work fills this in).
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub name: &'static str,
    pub sample_rate: f32,
}
