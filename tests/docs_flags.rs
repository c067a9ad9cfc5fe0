//! Every `throng` command line in README.md and docs/ names a command and flags that exist: a
//! flag renamed or removed fails here until the docs follow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn help(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_throng"))
        .args(args)
        .arg("--help")
        .output()
        .expect("throng runs");
    assert!(o.status.success(), "throng {args:?} --help failed");
    String::from_utf8(o.stdout).expect("help is UTF-8")
}

/// The subcommands `throng --help` lists.
fn commands() -> BTreeSet<String> {
    let text = help(&[]);
    let list = text
        .split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("Options:").next())
        .expect("throng --help lists its commands");
    (list.lines())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

/// README.md and every Markdown page of docs/.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let docs = std::fs::read_dir(root.join("docs")).expect("docs/ is readable");
    pages.extend(
        docs.flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    pages.sort();
    pages
}

/// The code in `page`: each inline code span, and each line of a fenced block (comments after
/// `#` dropped), with its line number.
fn code(page: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fenced = false;
    for (n, line) in page.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            let line = line.split(" #").next().unwrap_or(line);
            out.push((n + 1, line.to_owned()));
        } else {
            out.extend((line.split('`').skip(1).step_by(2)).map(|s| (n + 1, s.to_owned())));
        }
    }
    out
}

/// `(command, flags)` of each `throng COMMAND ...` (or `cargo run ... -- COMMAND ...`) in
/// `span`: the long flags after the command, up to the next command line or a pipe.
fn command_lines(span: &str, commands: &BTreeSet<String>) -> Vec<(String, Vec<String>)> {
    let words: Vec<&str> = span.split_whitespace().collect();
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let program = w.ends_with("throng") || (*w == "--" && i > 0 && words[..i].contains(&"run"));
        match words.get(i + 1) {
            Some(next) if program && commands.contains(*next) => {
                out.push((next.to_string(), Vec::new()));
                continue;
            }
            _ => {}
        }
        if matches!(*w, "|" | "&&" | ";" | "||") {
            // A pipe or the next shell command ends the flags.
            out.push((String::new(), Vec::new()));
        }
        if let Some((_, flags)) = out.last_mut() {
            // `[--flag N]`, `(--flag)`: usage notation around the flag.
            let w = w.trim_start_matches(['[', '(']);
            if let Some(flag) = w
                .strip_prefix("--")
                .filter(|f| f.starts_with(char::is_alphabetic))
            {
                let flag = flag
                    .split(['=', '[', ']', ',', ')', '`'])
                    .next()
                    .unwrap_or(flag);
                flags.push(format!("--{flag}"));
            }
        }
    }
    out.retain(|(c, _)| !c.is_empty());
    out
}

#[test]
fn every_flag_the_docs_name_exists_in_its_commands_help() {
    let commands = commands();
    assert!(
        commands.contains("demo") && commands.contains("bench"),
        "{commands:?}"
    );
    let mut helps: BTreeMap<String, String> = BTreeMap::new();
    let (mut checked, mut missing) = (0, Vec::new());
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("page is readable");
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        for (line, span) in code(&text) {
            for (command, flags) in command_lines(&span, &commands) {
                let help = (helps.entry(command.clone())).or_insert_with(|| help(&[&command]));
                for flag in flags {
                    checked += 1;
                    let listed = help
                        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
                        .any(|w| w == flag);
                    if !listed {
                        missing.push(format!("{name}:{line}: throng {command} {flag}"));
                    }
                }
            }
        }
    }
    assert!(checked > 150, "only {checked} flags found in the docs");
    assert!(
        missing.is_empty(),
        "flags the docs name that their command does not have:\n{}",
        missing.join("\n")
    );
}
