//! Scripted input changes by tick (`throng simulate --inputs`; docs/state-tree.md).
//!
//! ```toml
//! # Each [[set]] applies its values before tick `tick` runs (ticks count from 0).
//! [[set]]
//! tick = 100
//! speed = 1.4
//! wave = true
//! ```
//!
//! Values take the declared input's type (a float input also accepts an integer); entries may
//! come in any order and apply in tick order, file order within a tick.

use crate::instance::{Controller, InputError, InstanceState};
use crate::tree::{InputType, Tree, Value};

/// One scripted change.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub tick: u64,
    pub input: String,
    pub value: Value,
}

/// Input changes sorted by tick.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script {
    changes: Vec<Change>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{file}: {key}: {what}")]
pub struct ScriptError {
    pub file: String,
    pub key: String,
    pub what: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    #[serde(default)]
    set: Vec<toml::Table>,
}

impl Script {
    /// Parses `source` (the text of `file`) against `tree`'s inputs.
    pub fn parse(source: &str, file: &str, tree: &Tree) -> Result<Script, ScriptError> {
        let err = |key: String, what: String| ScriptError {
            file: file.to_owned(),
            key,
            what,
        };
        let doc: Doc = toml::from_str(source)
            .map_err(|e| err(String::new(), e.to_string().trim().to_owned()))?;
        let mut changes = Vec::new();
        for (i, entry) in doc.set.iter().enumerate() {
            let tick = match entry.get("tick") {
                Some(toml::Value::Integer(t)) if *t >= 0 => *t as u64,
                _ => {
                    return Err(err(
                        format!("set[{i}].tick"),
                        "missing or negative tick".into(),
                    ))
                }
            };
            for (name, value) in entry.iter().filter(|(k, _)| k.as_str() != "tick") {
                let key = format!("set[{i}].{name}");
                let input = tree
                    .input(name)
                    .ok_or_else(|| err(key.clone(), format!("unknown input '{name}'")))?;
                let ty = tree.inputs[input as usize].ty;
                let value = match (ty, value) {
                    (InputType::Bool, toml::Value::Boolean(b)) => Value::Bool(*b),
                    (InputType::Int, toml::Value::Integer(v)) => Value::Int(*v),
                    (InputType::Float, toml::Value::Float(v)) if v.is_finite() => Value::Float(*v),
                    (InputType::Float, toml::Value::Integer(v)) => Value::Float(*v as f64),
                    (ty, v) => {
                        return Err(err(
                            key,
                            format!("expected a finite {ty:?} value, found {v}"),
                        ))
                    }
                };
                changes.push(Change {
                    tick,
                    input: name.clone(),
                    value,
                });
            }
        }
        changes.sort_by_key(|c| c.tick);
        Ok(Script { changes })
    }

    /// A script of `changes` (sorted by tick here; file order within a tick is kept).
    pub fn from_changes(mut changes: Vec<Change>) -> Script {
        changes.sort_by_key(|c| c.tick);
        Script { changes }
    }

    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Applies the changes scheduled for `tick` to `s`.
    pub fn apply(
        &self,
        tick: u64,
        ctl: &Controller,
        s: &mut InstanceState,
    ) -> Result<(), InputError> {
        let start = self.changes.partition_point(|c| c.tick < tick);
        for c in self.changes[start..].iter().take_while(|c| c.tick == tick) {
            ctl.set_input(s, &c.input, c.value)?;
        }
        Ok(())
    }
}
