//! The colour map of the Check shading: a vertex's worst severity (a measure over its tolerance, 1 at the
//! tolerance) to a colour. Blue-grey where nothing moves badly, green up to half the tolerance, yellow at it,
//! orange and then red past it. The shader's map is generated from [`STOPS`] ([`glsl`]), so the view and the
//! panel's legend ([`colour`]) cannot drift apart.

/// (severity, linear RGB) stops, ascending; below the first and above the last the end colours hold.
pub const STOPS: [(f32, [f32; 3]); 5] = [
    (0.0, [0.28, 0.36, 0.58]),
    (0.5, [0.30, 0.62, 0.42]),
    (1.0, [0.96, 0.84, 0.22]),
    (1.5, [0.98, 0.52, 0.12]),
    (2.5, [0.86, 0.12, 0.10]),
];

/// The colour of `severity` (NaN reads as 0).
pub fn colour(severity: f32) -> [f32; 3] {
    let s = if severity.is_nan() { 0.0 } else { severity };
    let mut prev = STOPS[0];
    if s <= prev.0 {
        return prev.1;
    }
    for stop in STOPS.iter().skip(1) {
        if s <= stop.0 {
            let t = (s - prev.0) / (stop.0 - prev.0);
            return std::array::from_fn(|i| prev.1[i] + (stop.1[i] - prev.1[i]) * t);
        }
        prev = *stop;
    }
    prev.1
}

/// GLSL for `vec3 score_colour(float s)`, the same map as [`colour`].
pub fn glsl() -> String {
    let n = STOPS.len();
    let at: Vec<String> = STOPS.iter().map(|s| format!("{:.4}", s.0)).collect();
    let rgb: Vec<String> = STOPS
        .iter()
        .map(|s| format!("vec3({:.4}, {:.4}, {:.4})", s.1[0], s.1[1], s.1[2]))
        .collect();
    format!(
        "const float SCORE_AT[{n}] = float[{n}]({});\n\
         const vec3 SCORE_RGB[{n}] = vec3[{n}]({});\n\
         vec3 score_colour(float s) {{\n\
         \x20   if (!(s > SCORE_AT[0])) return SCORE_RGB[0];\n\
         \x20   for (int i = 1; i < {n}; i++) {{\n\
         \x20       if (s <= SCORE_AT[i]) return mix(SCORE_RGB[i - 1], SCORE_RGB[i], (s - SCORE_AT[i - 1]) / (SCORE_AT[i] - SCORE_AT[i - 1]));\n\
         \x20   }}\n\
         \x20   return SCORE_RGB[{last}];\n\
         }}\n",
        at.join(", "),
        rgb.join(", "),
        last = n - 1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_meets_its_stops_and_interpolates_between_them() {
        assert_eq!(colour(-1.0), STOPS[0].1);
        assert_eq!(colour(f32::NAN), STOPS[0].1);
        assert_eq!(colour(1.0), STOPS[2].1);
        assert_eq!(colour(100.0), STOPS[4].1);
        let mid = colour(0.75);
        for (i, m) in mid.iter().enumerate() {
            assert!((m - (STOPS[1].1[i] + STOPS[2].1[i]) / 2.0).abs() < 1e-6);
        }
        let src = glsl();
        assert!(
            src.contains("float[5](0.0000, 0.5000, 1.0000, 1.5000, 2.5000)"),
            "{src}"
        );
        assert!(src.contains("vec3 score_colour(float s)"));
    }
}
