//! Property tests: arbitrary and mutated bytes never panic the reader, and whatever it accepts
//! writes back to a package that reads back equal.

mod package_support;

use package_support::*;
use proptest::prelude::*;
use throng_cook::{read_package, write_package};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_are_rejected(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        prop_assert!(read_package(&bytes).is_err());
    }

    /// A valid header with a random body: reaches the hash check and, restamped, the table.
    #[test]
    fn random_bodies_behind_a_valid_header_are_rejected(
        count in 0u32..8,
        body in proptest::collection::vec(any::<u8>(), 0..2048),
    ) {
        let mut bytes = b"THRNGPKG".to_vec();
        bytes.extend_from_slice(&throng_cook::package::FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&count.to_le_bytes());
        bytes.extend_from_slice(&[0; 16]);
        bytes.extend_from_slice(&body);
        let total = bytes.len() as u64;
        put_u64(&mut bytes, 24, total);
        restamp(&mut bytes);
        prop_assert!(read_package(&bytes).is_err());
    }

    /// Several random byte writes into a real package, hash restamped.
    #[test]
    fn mutated_packages_never_panic(edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let mut bytes = write_package(&sample_package());
        for (at, value) in edits {
            let at = 32 + at.index(bytes.len() - 32);
            bytes[at] = value;
        }
        restamp(&mut bytes);
        if let Ok(package) = read_package(&bytes) {
            prop_assert_eq!(read_package(&write_package(&package)), Ok(package));
        }
    }
}
