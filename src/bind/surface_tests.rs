//! Tests of the per-part surface.

use super::*;

/// The parallel sorting of triangles into parts, over several blocks, against a sequential pass: input
/// order within each part, triangles with a corner out of range left out.
#[test]
fn part_triangles_keep_input_order_across_blocks() {
    let mut x: u32 = 12_345;
    let mut next = |m: u32| {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (x >> 8) % m
    };
    let vertices = 5000u32;
    let part: Vec<u32> = (0..vertices).map(|v| (v / 7) % 4).collect();
    let triangles: Vec<[u32; 3]> = (0..100_000)
        .map(|_| [next(vertices + 3), next(vertices), next(vertices + 3)])
        .collect();
    let mut want = vec![Vec::new(); 4];
    for t in &triangles {
        if t.iter().all(|&i| i < vertices) {
            want[part[t[0] as usize] as usize].push(*t);
        }
    }
    assert!(want.iter().all(|w| w.len() > 20_000));
    let split = |triangles: &[[u32; 3]]| {
        let (tris, starts) = part_triangles(triangles, &part, 4);
        let got: Vec<Vec<[u32; 3]>> = starts.windows(2).map(|r| tris[r[0]..r[1]].to_vec()).collect();
        (got, matches!(tris, std::borrow::Cow::Borrowed(_)))
    };
    assert_eq!(split(&triangles), (want.clone(), false));
    // Listed part after part already (out-of-range triangles left out first): the input is used as it is,
    // with the same answer, empty parts included; one triangle out of order, or one out of range, and it
    // is sorted out again.
    let sorted: Vec<[u32; 3]> = want.concat();
    assert_eq!(split(&sorted), (want.clone(), true));
    let no_part_2: Vec<[u32; 3]> = [&want[0][..], &want[1][..], &want[3][..]].concat();
    let mut want_no_2 = want.clone();
    want_no_2[2].clear();
    assert_eq!(split(&no_part_2), (want_no_2, true));
    let mut swapped = sorted.clone();
    let last = swapped.len() - 1;
    swapped.swap(0, last);
    assert!(!split(&swapped).1);
    let mut stray = sorted.clone();
    stray.insert(30_000, [0, 1, vertices]);
    assert_eq!(split(&stray), (want, false));
    assert_eq!(split(&[]), (vec![Vec::new(); 4], true));
}
