//! Recordings of `throng simulate` runs for exact replay (docs/state-tree.md, "Record and
//! replay").
//!
//! A recording names what a run depends on by content: the package (a hash of its bytes as
//! the package writer writes them), the tree (a hash of its TOML text), the run's settings, and
//! the scripted inputs themselves, with the digest the run ended on. Replaying reruns the same
//! ticks and must reach the same digest bit for bit; a package, tree or input script that is
//! not the recorded one is refused first, naming what differs.
//!
//! ```toml
//! [recording]
//! version = 1
//! package = "3f2a…"          # 16 hex digits
//! tree = "9c01…"
//! tree_file = "fixtures/trees/crowd.toml"
//! rate = 60.0
//! skeleton = 0
//! event_capacity = 64
//! ticks = 600
//! hash = "b7e4…"
//!
//! [[set]]                    # the inputs, as `--inputs` takes them
//! tick = 100
//! speed = 1.4
//! ```

use crate::digest::Digest;
use crate::script::{Change, Script};
use crate::tree::Value;

pub const VERSION: i64 = 1;

/// What a run depends on and what it produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    pub package: u64,
    pub tree: u64,
    /// The tree's file as the recording run named it (for messages only).
    pub tree_file: String,
    pub rate: f64,
    pub skeleton: u32,
    pub event_capacity: usize,
    pub ticks: u64,
    /// The run's digest (`throng simulate --hash`).
    pub hash: u64,
    pub inputs: Vec<Change>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReplayError {
    #[error("{file}: {what}")]
    Format { file: String, what: String },
    #[error(
        "the package is not the recorded one (recorded {recorded:016x}, this one {found:016x}): \
         pass the package the run was recorded with (--package)"
    )]
    Package { recorded: u64, found: u64 },
    #[error(
        "the tree is not the recorded one (recorded '{recorded_file}' {recorded:016x}, this one \
         '{file}' {found:016x}): pass the tree the run was recorded with"
    )]
    Tree {
        recorded_file: String,
        recorded: u64,
        file: String,
        found: u64,
    },
    #[error("the inputs are not the recorded ones: {what}; leave out --inputs to replay the recorded inputs")]
    Inputs { what: String },
    #[error("the replay diverged: the recording ended on hash {recorded:016x}, the replay on {found:016x}")]
    Diverged { recorded: u64, found: u64 },
}

/// The content hash of a package's bytes (as `throng_cook::write_package` writes them).
pub fn package_hash(bytes: &[u8]) -> u64 {
    let mut d = Digest::default();
    d.bytes(bytes);
    d.finish()
}

/// The content hash of a tree's TOML text.
pub fn tree_hash(source: &str) -> u64 {
    package_hash(source.as_bytes())
}

/// One `[[set]]` entry as written by [`Recording::to_toml`]: a tick and one input.
fn change(entry: &toml::Value) -> Option<Change> {
    let t = entry.as_table()?;
    let tick = u64::try_from(t.get("tick")?.as_integer()?).ok()?;
    let mut rest = t.iter().filter(|(k, _)| k.as_str() != "tick");
    let (input, value) = rest.next()?;
    let value = match value {
        toml::Value::Float(f) if f.is_finite() => Value::Float(*f),
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Boolean(b) => Value::Bool(*b),
        _ => return None,
    };
    rest.next().is_none().then(|| Change {
        tick,
        input: input.clone(),
        value,
    })
}

fn value_toml(v: Value) -> toml::Value {
    match v {
        Value::Float(f) => toml::Value::Float(f),
        Value::Int(i) => toml::Value::Integer(i),
        Value::Bool(b) => toml::Value::Boolean(b),
    }
}

impl Recording {
    /// The recording as TOML (the module doc's format). Floats are written in their shortest
    /// exact form, so they read back bit for bit.
    pub fn to_toml(&self) -> String {
        let mut head = toml::Table::new();
        let hex = |v: u64| toml::Value::String(format!("{v:016x}"));
        head.insert("version".into(), toml::Value::Integer(VERSION));
        head.insert("package".into(), hex(self.package));
        head.insert("tree".into(), hex(self.tree));
        head.insert("tree_file".into(), self.tree_file.clone().into());
        head.insert("rate".into(), toml::Value::Float(self.rate));
        head.insert(
            "skeleton".into(),
            toml::Value::Integer(self.skeleton as i64),
        );
        head.insert(
            "event_capacity".into(),
            toml::Value::Integer(self.event_capacity as i64),
        );
        head.insert("ticks".into(), toml::Value::Integer(self.ticks as i64));
        head.insert("hash".into(), hex(self.hash));
        let set: Vec<toml::Value> = self
            .inputs
            .iter()
            .map(|c| {
                let mut t = toml::Table::new();
                t.insert("tick".into(), toml::Value::Integer(c.tick as i64));
                t.insert(c.input.clone(), value_toml(c.value));
                toml::Value::Table(t)
            })
            .collect();
        let mut doc = toml::Table::new();
        doc.insert("recording".into(), toml::Value::Table(head));
        doc.insert("set".into(), toml::Value::Array(set));
        toml::to_string(&doc).unwrap_or_default()
    }

    /// Reads a recording (`source`, the text of `file`). Input values keep the TOML type they
    /// were written with; the tree checks them when they are applied.
    pub fn parse(source: &str, file: &str) -> Result<Recording, ReplayError> {
        let err = |what: String| ReplayError::Format {
            file: file.to_owned(),
            what,
        };
        let mut doc: toml::Table = toml::from_str(source).map_err(|e| err(e.to_string()))?;
        let head = match doc.remove("recording") {
            Some(toml::Value::Table(t)) => t,
            _ => return Err(err("no [recording] table: not a recording".into())),
        };
        let int = |key: &str| match head.get(key) {
            Some(toml::Value::Integer(v)) if *v >= 0 => Ok(*v as u64),
            _ => Err(err(format!(
                "recording.{key}: missing or not a whole number ≥ 0"
            ))),
        };
        let hex = |key: &str| match head.get(key) {
            Some(toml::Value::String(s)) => u64::from_str_radix(s, 16)
                .map_err(|_| err(format!("recording.{key}: '{s}' is not a hex hash"))),
            _ => Err(err(format!("recording.{key}: missing"))),
        };
        let version = int("version")?;
        if version != VERSION as u64 {
            return Err(err(format!(
                "recording version {version}; this build reads version {VERSION}"
            )));
        }
        let rate = match head.get("rate") {
            Some(toml::Value::Float(v)) => *v,
            Some(toml::Value::Integer(v)) => *v as f64,
            _ => return Err(err("recording.rate: missing or not a number".into())),
        };
        let tree_file = match head.get("tree_file") {
            Some(toml::Value::String(s)) => s.clone(),
            _ => return Err(err("recording.tree_file: missing".into())),
        };
        let skeleton = u32::try_from(int("skeleton")?)
            .map_err(|_| err("recording.skeleton: out of range".into()))?;
        let event_capacity = usize::try_from(int("event_capacity")?)
            .map_err(|_| err("recording.event_capacity: out of range".into()))?;
        let inputs = match doc.remove("set") {
            None => Vec::new(),
            Some(toml::Value::Array(set)) => set
                .iter()
                .enumerate()
                .map(|(i, entry)| {
                    change(entry)
                        .ok_or_else(|| err(format!("set[{i}]: not one tick and one input value")))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(err("set: not an array of tables".into())),
        };
        if let Some(key) = doc.keys().next() {
            return Err(err(format!("unknown key '{key}'")));
        }
        Ok(Recording {
            package: hex("package")?,
            tree: hex("tree")?,
            tree_file,
            rate,
            skeleton,
            event_capacity,
            ticks: int("ticks")?,
            hash: hex("hash")?,
            inputs,
        })
    }

    /// Refuses a replay with a package, tree or input script other than the recorded ones.
    pub fn check(
        &self,
        package: u64,
        tree: u64,
        tree_file: &str,
        inputs: Option<&Script>,
    ) -> Result<(), ReplayError> {
        if package != self.package {
            return Err(ReplayError::Package {
                recorded: self.package,
                found: package,
            });
        }
        if tree != self.tree {
            return Err(ReplayError::Tree {
                recorded_file: self.tree_file.clone(),
                recorded: self.tree,
                file: tree_file.to_owned(),
                found: tree,
            });
        }
        if let Some(given) = inputs {
            check_inputs(&self.inputs, given.changes())?;
        }
        Ok(())
    }

    /// The recorded inputs as a script.
    pub fn script(&self) -> Script {
        Script::from_changes(self.inputs.clone())
    }
}

/// The first difference between the recorded and the given input changes.
fn check_inputs(recorded: &[Change], given: &[Change]) -> Result<(), ReplayError> {
    let show = |c: &Change| format!("tick {} {} = {}", c.tick, c.input, value_toml(c.value));
    for (i, (a, b)) in recorded.iter().zip(given).enumerate() {
        if a != b {
            return Err(ReplayError::Inputs {
                what: format!(
                    "change {i} is {} in the recording, {} here",
                    show(a),
                    show(b)
                ),
            });
        }
    }
    if recorded.len() != given.len() {
        return Err(ReplayError::Inputs {
            what: format!(
                "the recording has {} changes, these inputs {}",
                recorded.len(),
                given.len()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_reads_back_equal_to_what_was_written_floats_bit_for_bit() {
        let change = |tick, input: &str, value| Change {
            tick,
            input: input.into(),
            value,
        };
        let recording = Recording {
            package: 0x0123_4567_89ab_cdef,
            tree: u64::MAX,
            tree_file: "trees/a \"b\".toml".into(),
            rate: 1.0 / 3.0,
            skeleton: 2,
            event_capacity: 7,
            ticks: 1 << 40,
            hash: 0,
            inputs: vec![
                change(0, "speed", Value::Float(0.1 + 0.2)),
                change(0, "wave", Value::Bool(true)),
                change(5, "speed", Value::Float(-0.0)),
                change(5, "count", Value::Int(-3)),
                change(9, "speed", Value::Float(1e-300)),
            ],
        };
        let back = Recording::parse(&recording.to_toml(), "run.toml").unwrap();
        assert_eq!(back, recording);
        let bits = |r: &Recording| {
            r.inputs
                .iter()
                .map(|c| c.value.as_f64().to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&back), bits(&recording));
        assert_eq!(back.rate.to_bits(), recording.rate.to_bits());
    }

    #[test]
    fn a_file_that_is_not_a_recording_is_refused_saying_why() {
        for (text, why) in [
            ("[[set]]\ntick = 1\nspeed = 1.0\n", "no [recording] table"),
            ("[recording]\nversion = 2\n", "recording version 2"),
            (
                "[recording]\nversion = 1\nrate = 60.0\n",
                "recording.tree_file: missing",
            ),
        ] {
            let e = Recording::parse(text, "x.toml").unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }
}
