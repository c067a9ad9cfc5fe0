//! Damaged packages: every truncation and every single-bit flip gives an error, never a panic;
//! with the hash re-stamped, flips reach the structural checks and those in counts, sizes,
//! offsets, reserved words and padding are still rejected.

mod package_support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use package_support::*;
use throng_cook::{read_package, write_package, PackageError};
use throng_cpu_ref::Package;

/// Reads `bytes`, turning a panic into a test failure that names the case.
fn read(bytes: &[u8], case: &str) -> Result<Package, PackageError> {
    catch_unwind(AssertUnwindSafe(|| read_package(bytes)))
        .unwrap_or_else(|_| panic!("reader panicked on {case}"))
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = write_package(&sample_package());
    for len in 0..bytes.len() {
        assert!(
            read(&bytes[..len], &format!("truncation to {len}")).is_err(),
            "truncation to {len} bytes was accepted"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        read_package(&longer),
        Err(PackageError::SizeMismatch {
            declared: bytes.len() as u64,
            actual: bytes.len() as u64 + 1
        })
    );
}

#[test]
fn every_bit_flip_is_an_error() {
    let bytes = write_package(&sample_package());
    for at in 0..bytes.len() {
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << bit;
            let result = read(&damaged, &format!("flip of bit {bit} at byte {at}"));
            assert!(
                result.is_err(),
                "flip of bit {bit} at byte {at} was accepted"
            );
            if (32..bytes.len()).contains(&at) {
                assert!(
                    matches!(result, Err(PackageError::HashMismatch { .. })),
                    "byte {at}: {result:?}"
                );
            }
        }
    }
}

#[test]
fn restamped_flips_never_panic_and_structural_ones_fail() {
    let bytes = write_package(&sample_package());
    let structural = structural_ranges(&bytes);
    let is_structural = |at: usize| structural.iter().any(|r| r.contains(&at));
    let (mut accepted, mut structural_flips) = (0, 0);
    for at in (0..bytes.len()).filter(|at| !(16..24).contains(at)) {
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << bit;
            restamp(&mut damaged);
            let result = read(
                &damaged,
                &format!("restamped flip of bit {bit} at byte {at}"),
            );
            if is_structural(at) {
                structural_flips += 1;
                assert!(
                    result.is_err(),
                    "structural flip of bit {bit} at byte {at} was accepted"
                );
            }
            if let Ok(read) = result {
                accepted += 1;
                // Compared as bytes: a flipped sign bit turns 0.0 into -0.0, which `==` calls equal.
                assert_ne!(
                    write_package(&read),
                    bytes,
                    "flip of bit {bit} at byte {at} decoded to the original"
                );
            }
        }
    }
    println!(
        "{} bytes: {structural_flips} structural bit flips all rejected; {accepted} of {} flips elsewhere decode (values and names)",
        bytes.len(),
        (bytes.len() - 8) * 8 - structural_flips
    );
    assert!(
        structural_flips > 1000,
        "structural map covers the header, table and counts"
    );
}

#[test]
fn restamped_byte_rewrites_never_panic() {
    let bytes = write_package(&sample_package());
    for at in 32..bytes.len() {
        for value in [0x00, 0x7f, 0x80, 0xff] {
            let mut damaged = bytes.clone();
            damaged[at] = value;
            restamp(&mut damaged);
            let _ = read(&damaged, &format!("byte {at} set to {value:#x}"));
        }
    }
}
