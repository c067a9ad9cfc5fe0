//! `Skeleton::new` refuses an empty skeleton and one past `Skeleton::MAX_JOINTS` joints with a
//! typed error, and accepts exactly `MAX_JOINTS`.

use glam::Affine3A;
use throng_cpu_ref::{Skeleton, SkeletonError, Trs, NO_PARENT};

/// A chain of `n` joints: joint 0 is the root and each joint is the parent of the next.
fn chain(n: usize) -> Result<Skeleton, SkeletonError> {
    let parents = (0..n)
        .map(|j| if j == 0 { NO_PARENT } else { j as u32 - 1 })
        .collect();
    Skeleton::new(
        parents,
        vec![Trs::IDENTITY; n],
        (0..n).map(|j| format!("j{j}")).collect(),
        vec![0; n],
        Affine3A::IDENTITY,
    )
}

#[test]
fn a_skeleton_of_65_536_joints_is_refused_and_65_535_is_accepted() {
    assert_eq!(Skeleton::MAX_JOINTS, 65_535);
    assert_eq!(chain(65_536), Err(SkeletonError::TooManyJoints(65_536)));
    assert_eq!(
        chain(65_536).unwrap_err().to_string(),
        "skeleton has 65536 joints, more than the 65535 supported"
    );
    let largest = chain(65_535).expect("65 535 joints are supported");
    assert_eq!(largest.joint_count(), 65_535);
    assert_eq!(largest.depth[65_534], 65_534);
}

#[test]
fn a_skeleton_with_no_joints_is_refused_as_empty() {
    assert_eq!(chain(0), Err(SkeletonError::Empty));
    assert_eq!(
        Skeleton::new(vec![], vec![], vec![], vec![], Affine3A::IDENTITY),
        Err(SkeletonError::Empty)
    );
    assert_eq!(SkeletonError::Empty.to_string(), "skeleton has no joints");
    assert!(chain(1).is_ok(), "a single root joint is a skeleton");
}
