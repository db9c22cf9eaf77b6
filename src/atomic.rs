//! Writing files safely: every file skinbind writes goes through [`save_atomic`], and every command checks its
//! outputs with [`check_output`] before it writes any of them.
//!
//! A save writes a temporary file beside the target, created exclusively under an unpredictable name (so a
//! link planted at a guessable name is never followed), flushes and syncs it, gives it the old file's
//! permissions, and renames it over the target. Any failure leaves the old file as it was and removes the
//! temporary file. A process killed mid-save leaves its temporary file behind; the next save into that folder
//! removes such leftovers of ours (named `.NAME.PID.XXXXXX.skinbind-tmp`) whose process is gone.
//!
//! This module sits below everything that writes files (the formats, the CLI, the editor): it knows bytes and
//! paths, nothing of the model, and depends on nothing else in the crate.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Why a file was not written: the path, and what the system said or why it was refused.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    // Named `error`, not `source`, as in `formats::SaveError`: the message already includes it.
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: {message}", path.display())]
    Refused { path: PathBuf, message: String },
}

/// The suffix of our temporary files.
const TMP_SUFFIX: &str = ".skinbind-tmp";

/// A leftover temporary file is removed when its process is gone or, where that cannot be told, after this long.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(3600);

fn io_err(path: &Path) -> impl Fn(io::Error) -> SaveError + '_ {
    move |error| SaveError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// The folder a path's file lives in (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Refuse a target that exists and is not a regular file (a device, a folder, a FIFO).
fn check_target(path: &Path) -> Result<(), SaveError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(SaveError::Refused {
            path: path.to_path_buf(),
            message: "exists and is not a regular file; refused".into(),
        }),
        _ => Ok(()),
    }
}

/// Check, before any work, that `path` can be written: its folder exists and takes a new file, and the path is
/// not something other than a regular file. Commands call this for every output before writing the first.
pub fn check_output(path: &Path) -> Result<(), SaveError> {
    check_target(path)?;
    let dir = folder_of(path);
    if !dir.is_dir() {
        return Err(SaveError::Refused {
            path: path.to_path_buf(),
            message: format!("the folder {} does not exist", dir.display()),
        });
    }
    // A temporary file made and dropped at once: the folder takes new files (permissions, a read-only mount).
    temp_in(&dir, path, None).map(drop).map_err(io_err(path))
}

/// A new temporary file in `dir` for the target `path`, with `mode`'s permissions where given.
fn temp_in(dir: &Path, path: &Path, permissions: Option<std::fs::Permissions>) -> io::Result<tempfile::NamedTempFile> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut b = tempfile::Builder::new();
    let prefix = format!(".{name}.{}.", std::process::id());
    b.prefix(&prefix).suffix(TMP_SUFFIX);
    if let Some(p) = permissions {
        b.permissions(p);
    }
    b.tempfile_in(dir)
}

/// Permissions for a new file: what a plain create would give (read and write for all, less the umask).
#[cfg(unix)]
fn new_file_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o666))
}

#[cfg(not(unix))]
fn new_file_permissions() -> Option<std::fs::Permissions> {
    None
}

/// Write a file atomically (see the module doc). A failure at any point leaves the old file as it was.
pub fn save_atomic(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), SaveError> {
    check_target(path)?;
    let dir = folder_of(path);
    remove_stale(&dir);
    let old = std::fs::metadata(path).ok();
    let result = (|| {
        let mut tmp = temp_in(&dir, path, new_file_permissions())?;
        {
            let mut out = io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
            write(&mut out)?;
            out.flush()?;
        }
        tmp.as_file().sync_all()?;
        if let Some(m) = &old {
            tmp.as_file().set_permissions(m.permissions())?;
        }
        // On error the temporary file is removed when `tmp` drops.
        tmp.persist(path).map(drop).map_err(|e| e.error)
    })();
    result.map_err(io_err(path))
}

/// Remove temporary files of ours in `dir` left by a process that is gone. Errors are ignored: this is tidying.
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with('.') && name.ends_with(TMP_SUFFIX)) {
            continue;
        }
        if is_stale(name, &e) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether a temporary file named `.NAME.PID.XXXXXX.skinbind-tmp` is a leftover.
fn is_stale(name: &str, entry: &std::fs::DirEntry) -> bool {
    let stem = &name[..name.len() - TMP_SUFFIX.len()];
    let pid = stem.rsplit('.').nth(1).and_then(|p| p.parse::<u32>().ok());
    let Some(pid) = pid else { return false };
    if pid == std::process::id() {
        return false;
    }
    if Path::new("/proc/self").exists() {
        return !Path::new(&format!("/proc/{pid}")).exists();
    }
    entry
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > STALE_AFTER)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// A writer that fails halfway (after more than the buffer holds, so bytes did reach the temporary file)
    /// leaves the old file as it was and no temporary file behind.
    #[test]
    fn a_write_that_fails_halfway_leaves_the_old_file_intact() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("rig.skin");
        std::fs::write(&path, b"old contents\n").expect("write");
        let err = save_atomic(&path, |w| {
            let chunk = vec![b'x'; 1 << 16];
            for _ in 0..40 {
                w.write_all(&chunk)?;
            }
            Err(io::Error::other("the disk is full"))
        })
        .expect_err("the write fails");
        assert!(err.to_string().contains("the disk is full"), "{err}");
        assert_eq!(std::fs::read(&path).expect("read"), b"old contents\n");
        assert_eq!(names(dir.path()), vec!["rig.skin"]);
        // A successful write replaces it.
        save_atomic(&path, |w| w.write_all(b"new\n")).expect("write");
        assert_eq!(std::fs::read(&path).expect("read"), b"new\n");
    }

    /// The old scheme wrote `.NAME.PID.tmp` with a plain create, which followed a link planted at that name.
    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_the_old_temporary_name_is_not_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, b"precious\n").expect("write");
        let out = dir.path().join("out");
        std::fs::create_dir(&out).expect("mkdir");
        let path = out.join("rig.skel");
        let planted = out.join(format!(".rig.skel.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).expect("symlink");
        save_atomic(&path, |w| w.write_all(b"balljoint a { }\n")).expect("save");
        assert_eq!(std::fs::read(&victim).expect("read"), b"precious\n");
        assert_eq!(std::fs::read(&path).expect("read"), b"balljoint a { }\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_save_keeps_the_old_files_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("rig.skin");
        std::fs::write(&path, b"old\n").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        save_atomic(&path, |w| w.write_all(b"new\n")).expect("save");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // A new file gets what a plain create gives (0666 less the umask), not the temporary file's 0600.
        let fresh = dir.path().join("fresh.skin");
        std::fs::write(dir.path().join("probe"), b"").expect("write");
        let probe = std::fs::metadata(dir.path().join("probe"))
            .expect("meta")
            .permissions()
            .mode()
            & 0o777;
        save_atomic(&fresh, |w| w.write_all(b"x\n")).expect("save");
        let mode = std::fs::metadata(&fresh).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, probe);
    }

    #[cfg(unix)]
    #[test]
    fn a_target_that_is_not_a_regular_file_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = save_atomic(dir.path(), |w| w.write_all(b"x")).expect_err("a folder");
        assert!(
            e.to_string().ends_with("exists and is not a regular file; refused"),
            "{e}"
        );
        let e = save_atomic(Path::new("/dev/null"), |w| w.write_all(b"x")).expect_err("a device");
        assert_eq!(e.to_string(), "/dev/null: exists and is not a regular file; refused");
    }

    #[test]
    fn leftovers_of_a_killed_save_are_removed_by_the_next_save() {
        let dir = tempfile::tempdir().expect("tempdir");
        // A process id that is not running: past the kernel's largest.
        let dead = dir.path().join(".big.glb.4194999.AbC123.skinbind-tmp");
        std::fs::write(&dead, vec![0u8; 1000]).expect("write");
        // One of this process's (a save in progress on another thread) stays.
        let live = dir
            .path()
            .join(format!(".x.skin.{}.XyZ789.skinbind-tmp", std::process::id()));
        std::fs::write(&live, b"").expect("write");
        save_atomic(&dir.path().join("other.skin"), |w| w.write_all(b"x\n")).expect("save");
        let left = names(dir.path());
        assert!(
            !left.contains(&".big.glb.4194999.AbC123.skinbind-tmp".to_string()),
            "{left:?}"
        );
        assert!(left.contains(&format!(".x.skin.{}.XyZ789.skinbind-tmp", std::process::id())));
    }

    #[test]
    fn outputs_are_checked_before_anything_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = check_output(&dir.path().join("missing/r.json")).expect_err("no folder");
        assert!(e.to_string().contains("does not exist"), "{e}");
        check_output(&dir.path().join("r.json")).expect("writable");
        assert!(names(dir.path()).is_empty(), "the probe leaves nothing");
    }
}
