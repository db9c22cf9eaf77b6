//! Wavefront OBJ output of a (deformed) mesh: `v`, `vn`, optional `vt`, and `f` with 1-based indices, so that
//! any viewer can check a pose. Reading OBJ comes with the interchange work (tobj).

use std::io::{self, Write};

use glam::{Vec2, Vec3};

use super::write_row;

pub fn write_obj(
    out: &mut dyn Write,
    positions: &[Vec3],
    normals: &[Vec3],
    texcoords: Option<&[Vec2]>,
    triangles: &[[u32; 3]],
) -> io::Result<()> {
    writeln!(
        out,
        "# skinbind: {} vertices, {} triangles",
        positions.len(),
        triangles.len()
    )?;
    for p in positions {
        write_row(out, "v ", &p.to_array())?;
    }
    for n in normals {
        write_row(out, "vn ", &n.to_array())?;
    }
    if let Some(tc) = texcoords {
        for t in tc {
            write_row(out, "vt ", &t.to_array())?;
        }
    }
    for t in triangles {
        let [a, b, c] = t.map(|i| i + 1);
        if texcoords.is_some() {
            writeln!(out, "f {a}/{a}/{a} {b}/{b}/{b} {c}/{c}/{c}")?;
        } else {
            writeln!(out, "f {a}//{a} {b}//{b} {c}//{c}")?;
        }
    }
    Ok(())
}
