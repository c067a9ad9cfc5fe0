//! Damaged glTF input (truncations, byte flips) gives typed errors, never a panic.

mod asset_support;

use asset_support::assets;

use std::panic::{catch_unwind, AssertUnwindSafe};

use throng_cook::{cook, import_slice, Profile};

/// Imports (and cooks, when the import succeeds) without panicking; `Ok(true)` when both
/// succeeded, `Ok(false)` when either returned an error, `Err` with the panic message otherwise.
fn import_and_cook(bytes: &[u8]) -> Result<bool, String> {
    catch_unwind(AssertUnwindSafe(|| match import_slice(bytes, "damaged") {
        Ok(imported) => cook(&imported, &Profile::DEFAULT).is_ok(),
        Err(e) => {
            assert!(!e.to_string().is_empty());
            false
        }
    }))
    .map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or(p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// Range of the JSON chunk's content in a GLB.
fn json_chunk(glb: &[u8]) -> std::ops::Range<usize> {
    let len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    20..20 + len
}

#[test]
fn truncated_files_are_errors_at_every_length() {
    let Some(dir) = assets() else { return };
    for name in ["RiggedSimple.glb", "SimpleSkin.gltf"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(import_and_cook(&bytes), Ok(true), "{name} intact");
        for len in 0..bytes.len() {
            let outcome = import_and_cook(&bytes[..len]);
            assert_eq!(outcome, Ok(false), "{name} truncated to {len} bytes");
        }
    }
}

#[test]
fn byte_flips_in_the_json_never_panic() {
    let Some(dir) = assets() else { return };
    let glb = std::fs::read(dir.join("RiggedSimple.glb")).unwrap();
    let gltf = std::fs::read(dir.join("SimpleSkin.gltf")).unwrap();
    let cases = [
        ("RiggedSimple.glb", &glb, json_chunk(&glb)),
        ("SimpleSkin.gltf", &gltf, 0..gltf.len()),
    ];
    for (name, bytes, range) in cases {
        let (mut errors, mut oks) = (0, 0);
        for at in range {
            // A low bit (digits, letters), a case / space bit, a high bit (invalid UTF-8), and
            // structural characters that change what a number or string means.
            for flip in [
                Flip::Xor(0x01),
                Flip::Xor(0x20),
                Flip::Xor(0x80),
                Flip::Set(b'9'),
                Flip::Set(b'-'),
                Flip::Set(b'"'),
            ] {
                let mut damaged = bytes.clone();
                damaged[at] = flip.apply(damaged[at]);
                match import_and_cook(&damaged) {
                    Ok(true) => oks += 1,
                    Ok(false) => errors += 1,
                    Err(panic) => panic!("{name}: byte {at} {flip:?} panicked: {panic}"),
                }
            }
        }
        println!("{name}: {errors} damaged variants rejected, {oks} still valid");
        assert!(errors > oks, "{name}: most flips must be rejected");
    }
}

#[derive(Clone, Copy, Debug)]
enum Flip {
    Xor(u8),
    Set(u8),
}

impl Flip {
    fn apply(self, b: u8) -> u8 {
        match self {
            Flip::Xor(x) => b ^ x,
            Flip::Set(v) => v,
        }
    }
}

#[test]
fn bad_glb_headers_are_errors() {
    let Some(dir) = assets() else { return };
    let glb = std::fs::read(dir.join("RiggedSimple.glb")).unwrap();
    for (offset, value) in [
        (8, 0u32),
        (8, 11),
        (8, 19),
        (8, u32::MAX),
        (4, 1),
        (12, u32::MAX),
        (12, 0),
    ] {
        let mut damaged = glb.clone();
        damaged[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
        assert_eq!(
            import_and_cook(&damaged),
            Ok(false),
            "header word at {offset} = {value}"
        );
    }
}
