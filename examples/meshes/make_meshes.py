#!/usr/bin/env python3
"""Regenerates the shipped Gmsh meshes (MSH 4.1) with Gmsh's Python API (`pip install gmsh`).

    python3 examples/meshes/make_meshes.py

plate.msh      2.0 x 1.0 rectangle, unstructured 3-node triangles (Delaunay), ASCII; physical
               groups "left", "right", "bottom", "top" (lines) and "plate" (surface)
box.msh        1.0 x 1.0 x 1.0 box, unstructured 4-node tetrahedra (Delaunay), ASCII; physical
               groups "xmin", "xmax", "ymin", "ymax", "zmin", "zmax" (faces) and "box" (volume)
box_binary.msh the same mesh as box.msh in binary MSH 4.1 (tests read both and compare)
convergence/   unit squares (Delaunay triangles, linear and quadratic) and unit cubes (Delaunay
               quadratic tetrahedra) at three sizes each (Gmsh's own second-order nodes): the meshes of
               the forms' convergence tests, `square_{tri3,tri6}_{0,1,2}.msh` and
               `cube_tet10_{0,1,2}.msh`, each with the group "boundary"

Only elements of physical groups are saved (Gmsh's default), so the boundary lines and faces
appear once each, in their group. Gmsh's meshers are deterministic for one Gmsh version; the
files were made with the version printed in their header comment below.
"""
import os
import gmsh

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, binary=False):
    gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
    gmsh.option.setNumber("Mesh.Binary", 1 if binary else 0)
    gmsh.write(os.path.join(HERE, name))


def plate():
    gmsh.model.add("plate")
    occ = gmsh.model.occ
    surface = occ.addRectangle(0.0, 0.0, 0.0, 2.0, 1.0)
    occ.synchronize()
    # Name the boundary curves by where their centres lie.
    names = {}
    for _, c in gmsh.model.getBoundary([(2, surface)], oriented=False):
        x, y, _ = occ.getCenterOfMass(1, c)
        if abs(x) < 1e-9:
            names[c] = "left"
        elif abs(x - 2.0) < 1e-9:
            names[c] = "right"
        elif abs(y) < 1e-9:
            names[c] = "bottom"
        else:
            names[c] = "top"
    for c, name in sorted(names.items()):
        gmsh.model.addPhysicalGroup(1, [c], name=name)
    gmsh.model.addPhysicalGroup(2, [surface], name="plate")
    gmsh.option.setNumber("Mesh.Algorithm", 5)  # Delaunay
    gmsh.option.setNumber("Mesh.MeshSizeMin", 0.03)
    gmsh.option.setNumber("Mesh.MeshSizeMax", 0.03)
    gmsh.model.mesh.generate(2)
    save("plate.msh")


def box():
    gmsh.model.add("box")
    occ = gmsh.model.occ
    volume = occ.addBox(0.0, 0.0, 0.0, 1.0, 1.0, 1.0)
    occ.synchronize()
    for _, s in gmsh.model.getBoundary([(3, volume)], oriented=False):
        c = occ.getCenterOfMass(2, s)
        for axis, label in enumerate("xyz"):
            if abs(c[axis]) < 1e-9:
                gmsh.model.addPhysicalGroup(2, [s], name=label + "min")
            elif abs(c[axis] - 1.0) < 1e-9:
                gmsh.model.addPhysicalGroup(2, [s], name=label + "max")
    gmsh.model.addPhysicalGroup(3, [volume], name="box")
    gmsh.option.setNumber("Mesh.Algorithm3D", 1)  # Delaunay
    gmsh.option.setNumber("Mesh.MeshSizeMin", 0.12)
    gmsh.option.setNumber("Mesh.MeshSizeMax", 0.12)
    gmsh.model.mesh.generate(3)
    save("box.msh")
    save("box_binary.msh", binary=True)


def unit(name, dim, size, order):
    """A unit square or cube meshed at `size`, of `order`, its whole boundary one group."""
    gmsh.model.add(name)
    occ = gmsh.model.occ
    entity = occ.addRectangle(0.0, 0.0, 0.0, 1.0, 1.0) if dim == 2 else occ.addBox(0.0, 0.0, 0.0, 1.0, 1.0, 1.0)
    occ.synchronize()
    boundary = [b for _, b in gmsh.model.getBoundary([(dim, entity)], oriented=False)]
    gmsh.model.addPhysicalGroup(dim - 1, boundary, name="boundary")
    gmsh.model.addPhysicalGroup(dim, [entity], name="domain")
    gmsh.option.setNumber("Mesh.Algorithm", 5)
    gmsh.option.setNumber("Mesh.Algorithm3D", 1)
    gmsh.option.setNumber("Mesh.MeshSizeMin", size)
    gmsh.option.setNumber("Mesh.MeshSizeMax", size)
    gmsh.model.mesh.generate(dim)
    if order == 2:
        gmsh.model.mesh.setOrder(2)
    save(os.path.join("convergence", name + ".msh"))
    gmsh.model.remove()


def convergence():
    os.makedirs(os.path.join(HERE, "convergence"), exist_ok=True)
    for level, size in enumerate([0.2, 0.1, 0.05]):
        unit(f"square_tri3_{level}", 2, size, 1)
        unit(f"square_tri6_{level}", 2, size, 2)
    for level, size in enumerate([0.3, 0.2, 0.13]):
        unit(f"cube_tet10_{level}", 3, size, 2)


gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
print("gmsh", gmsh.__version__)
plate()
box()
convergence()
gmsh.finalize()
