//! The node tree of a glTF file: parents, checked to be a strict forest (glTF 2.0 §3.5.3).

use gltf::Document;

use super::CookError;

/// Parent of every node, and each node's label for errors.
pub(super) struct Hierarchy {
    pub parent: Vec<Option<usize>>,
}

impl Hierarchy {
    /// Rejects a node with two parents and cycles, naming the node.
    pub fn new(doc: &Document, file: &str) -> Result<Self, CookError> {
        let n = doc.nodes().len();
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for node in doc.nodes() {
            for child in node.children() {
                let c = child.index();
                if let Some(first) = parent[c] {
                    return Err(CookError::TwoParents {
                        file: file.to_string(),
                        node: node_label(doc, c),
                        first,
                        second: node.index(),
                    });
                }
                parent[c] = Some(node.index());
            }
        }
        // With one parent per node, a walk up that outlasts the node count is a cycle.
        for start in 0..n {
            let mut at = start;
            let mut steps = 0;
            while let Some(p) = parent[at] {
                at = p;
                steps += 1;
                if steps > n {
                    return Err(CookError::Cycle {
                        file: file.to_string(),
                        node: node_label(doc, start),
                    });
                }
            }
        }
        Ok(Hierarchy { parent })
    }

    /// Nodes from the scene root down to `node`, inclusive.
    pub fn path_from_root(&self, node: usize) -> Vec<usize> {
        let mut path = vec![node];
        let mut at = node;
        while let Some(p) = self.parent.get(at).copied().flatten() {
            path.push(p);
            at = p;
        }
        path.reverse();
        path
    }
}

/// `node 3 'Hips'`, or `node 3` when unnamed.
pub(super) fn node_label(doc: &Document, index: usize) -> String {
    match doc.nodes().nth(index).and_then(|n| n.name()) {
        Some(name) => format!("node {index} '{name}'"),
        None => format!("node {index}"),
    }
}
