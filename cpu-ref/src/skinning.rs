//! Linear blend skinning of positions and normals.
