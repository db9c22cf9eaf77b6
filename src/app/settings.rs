//! Editor settings that outlive a session: recent files and which panels are shown.
//!
//! Stored as JSON in `$XDG_CONFIG_HOME/skinbind/settings.json` (or `~/.config/skinbind/settings.json`), written
//! atomically. Every field has a default (`#[serde(default)]`), so an older or partial file still loads; a file
//! that does not parse at all is ignored and replaced on the next save.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How many recent files the File menu keeps.
pub const MAX_RECENT: usize = 10;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Most recent first, no repeats.
    pub recent: Vec<PathBuf>,
    pub show_outliner: bool,
    pub show_properties: bool,
    pub show_timeline: bool,
    pub show_status: bool,
    pub show_history: bool,
    pub show_weights: bool,
    pub show_check: bool,
    /// Which of the right-hand dock's tabs (Properties, Check, History) is in front.
    pub dock_tab: DockTab,
    /// The side panels' widths in points as the user last left them (None: the default share).
    pub panel_widths: PanelWidths,
}

/// The tabs of the dock on the right: the panels that share it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum DockTab {
    #[default]
    Properties,
    Check,
    History,
}

impl DockTab {
    pub const ALL: [DockTab; 3] = [DockTab::Properties, DockTab::Check, DockTab::History];

    /// The tab's title (also its accessibility label).
    pub fn title(self) -> &'static str {
        match self {
            DockTab::Properties => "Properties",
            DockTab::Check => "Check",
            DockTab::History => "History",
        }
    }
}

/// Side panel widths a user chose by dragging a panel's edge, kept from one session to the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PanelWidths {
    pub tree: Option<f32>,
    pub weights: Option<f32>,
    pub dock: Option<f32>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            recent: Vec::new(),
            show_outliner: true,
            show_properties: true,
            show_timeline: true,
            show_status: true,
            show_history: false,
            show_weights: true,
            show_check: false,
            dock_tab: DockTab::Properties,
            panel_widths: PanelWidths::default(),
        }
    }
}

impl Settings {
    /// Put `paths` at the front of the recent list, dropping older copies and the oldest beyond the limit. Paths
    /// are stored absolute (against the current folder), so that the list works from wherever skinbind starts.
    pub fn add_recent(&mut self, paths: &[PathBuf]) {
        for p in paths.iter().rev() {
            let p = std::path::absolute(p).unwrap_or_else(|_| p.clone());
            self.recent.retain(|r| *r != p);
            self.recent.insert(0, p);
        }
        self.recent.truncate(MAX_RECENT);
    }

    /// The default settings file, when a home or config folder is known.
    pub fn default_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(base.join("skinbind").join("settings.json"))
    }

    /// Read settings; a missing or unreadable file gives the defaults. Relative recent paths (written by older
    /// versions) are dropped: the folder they were relative to is not known.
    pub fn load(path: &Path) -> Self {
        let mut s: Self = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        s.recent.retain(|p| p.is_absolute());
        s
    }

    /// Whether the dock shows `tab` (its panel is turned on in the View menu).
    pub fn shows(&self, tab: DockTab) -> bool {
        match tab {
            DockTab::Properties => self.show_properties,
            DockTab::Check => self.show_check,
            DockTab::History => self.show_history,
        }
    }

    /// The dock's tab in front: the chosen one while it is shown, else the first shown (None: the dock is empty).
    pub fn front_tab(&self) -> Option<DockTab> {
        if self.shows(self.dock_tab) {
            return Some(self.dock_tab);
        }
        DockTab::ALL.into_iter().find(|&t| self.shows(t))
    }

    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        use anyhow::Context;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
        }
        let json = serde_json::to_vec_pretty(self)?;
        crate::atomic::save_atomic(path, |w| w.write_all(&json))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_old_file_with_fewer_fields_still_loads() {
        let s: Settings = serde_json::from_str(r#"{"recent": ["a.skel"]}"#).unwrap();
        assert_eq!(s.recent, vec![PathBuf::from("a.skel")]);
        assert!(s.show_timeline);
    }

    #[test]
    fn recent_files_are_most_recent_first_without_repeats() {
        let mut s = Settings::default();
        s.add_recent(&["/r/a".into(), "/r/b".into()]);
        s.add_recent(&["/r/b".into()]);
        assert_eq!(s.recent, vec![PathBuf::from("/r/b"), PathBuf::from("/r/a")]);
        for i in 0..20 {
            s.add_recent(&[format!("/r/f{i}").into()]);
        }
        assert_eq!(s.recent.len(), MAX_RECENT);
        assert_eq!(s.recent[0], PathBuf::from("/r/f19"));
        // A relative path is stored against the current folder.
        s.add_recent(&["rel.skel".into()]);
        assert_eq!(s.recent[0], std::env::current_dir().unwrap().join("rel.skel"));
    }

    #[test]
    fn settings_round_trip_through_a_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub").join("settings.json");
        let mut s = Settings {
            show_outliner: false,
            ..Settings::default()
        };
        s.add_recent(&["x.skin".into()]);
        s.save(&p).unwrap();
        assert_eq!(Settings::load(&p), s);
    }
}
