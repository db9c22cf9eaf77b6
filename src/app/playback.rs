//! Animation playback state and the time step, as plain data and a pure function.
//!
//! Time is in the clip's units (seconds in the course files). Playing advances time by the frame's delta times
//! the speed; at the end of the clip's range it wraps (looping) or stops at the end (not looping). A negative
//! speed plays backwards the same way.

/// The timeline's state. It is view state, not part of the document: playing never marks the file changed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Playback {
    pub time: f32,
    pub playing: bool,
    pub looping: bool,
    pub speed: f32,
}

impl Default for Playback {
    fn default() -> Self {
        Self {
            time: 0.0,
            playing: false,
            looping: true,
            speed: 1.0,
        }
    }
}

/// The time after `dt` seconds at `speed` within `range`, and whether playback goes on.
pub fn advance(time: f32, dt: f32, speed: f32, range: (f32, f32), looping: bool) -> (f32, bool) {
    let (start, end) = (range.0.min(range.1), range.0.max(range.1));
    let t = time + dt * speed;
    if !t.is_finite() {
        return (start, false);
    }
    let len = end - start;
    if t >= start && t <= end {
        return (t, true);
    }
    if looping {
        if len <= 0.0 {
            return (start, true);
        }
        (start + (t - start).rem_euclid(len), true)
    } else if t > end {
        (end, false)
    } else {
        (start, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn playing_moves_time_by_dt_times_speed() {
        assert_eq!(advance(1.0, 0.5, 2.0, (0.0, 4.0), false), (2.0, true));
    }

    #[test]
    fn looping_wraps_and_clamping_stops_at_the_end() {
        let (t, go) = advance(3.5, 1.0, 1.0, (0.0, 4.0), true);
        assert!((t - 0.5).abs() < 1e-6 && go);
        assert_eq!(advance(3.5, 1.0, 1.0, (0.0, 4.0), false), (4.0, false));
        assert_eq!(advance(0.5, 1.0, -1.0, (0.0, 4.0), false), (0.0, false));
        let (t, _) = advance(0.5, 1.0, -1.0, (0.0, 4.0), true);
        assert!((t - 3.5).abs() < 1e-6);
    }

    #[test]
    fn an_empty_range_holds_its_start() {
        assert_eq!(advance(2.0, 1.0, 1.0, (2.0, 2.0), true), (2.0, true));
        assert_eq!(advance(0.0, f32::NAN, 1.0, (0.0, 1.0), true), (0.0, false));
    }
}
