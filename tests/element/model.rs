//! `Model::of::<E>`: the element type carries its matrices to the model (no user-side `Vec<f32>`
//! hand-over), and a mesh the device kernels cannot represent is an error.

use crate::elements;

use clforge::runtime::element::mesh::{Mesh, StructuredMesh, UnstructuredMesh};
use clforge::runtime::element::problem::Model;
use clforge::runtime::element::Element;
use elements::quad4::{Plate, Quad4};

const PLATE: Plate = Plate {
    e: 2.0e3,
    nu: 0.25,
    rho: 3.0,
    thickness: 0.1,
};

#[test]
fn matrices_and_masses_come_from_the_element() {
    let spec = Quad4::spec();
    let (h, nx, ny) = ([0.5, 0.25, 1.0], 6, 4);
    let sm = StructuredMesh::for_element(&spec, [nx, ny, 1], h).unwrap();
    for mesh in [
        Mesh::Structured(sm.clone()),
        Mesh::Unstructured(UnstructuredMesh::from_structured(&sm, spec.node_offsets).unwrap()),
    ] {
        let model = Model::of::<Quad4>(mesh, &PLATE).unwrap();
        let coords = [[0.0, 0.0], [0.5, 0.0], [0.5, 0.25], [0.0, 0.25]];
        let k = Quad4::stiffness(&coords, &PLATE).unwrap();
        assert_eq!(model.stiffness, vec![k.data().to_vec()]);
        let g = Quad4::stress_matrix(&coords, &PLATE).unwrap();
        assert_eq!(model.stress[0].len(), g.data().len());
        // Lumped masses add up to ρ·V per displacement component.
        let total: f64 = model.mass.iter().sum();
        let exact = 2.0 * PLATE.rho * PLATE.thickness * (nx as f64 * h[0]) * (ny as f64 * h[1]);
        assert!((total - exact).abs() < 1e-5 * exact, "{total} vs {exact}");
    }
}

#[test]
fn elements_of_different_shape_are_refused() {
    let spec = Quad4::spec();
    let sm = StructuredMesh::for_element(&spec, [3, 2, 1], [1.0, 1.0, 1.0]).unwrap();
    let mut um = UnstructuredMesh::from_structured(&sm, spec.node_offsets).unwrap();
    // Move the last node: the last element is no longer a unit square.
    let last = um.coords.len() - 1;
    um.coords[last][0] += 0.1;
    let err = Model::of::<Quad4>(Mesh::Unstructured(um), &PLATE)
        .unwrap_err()
        .to_string();
    assert!(err.contains("differs in shape from element 0"), "{err}");
}
