//! An artifact as the file a download saves ([`ArtifactFile`]): its name and its exact text,
//! with `base_url` replaced by the redaction marker when the user ticks *Redact base URL*. The
//! run's *Download artifact*, a sweep's `.zip` and a repeat group's `.zip` all write their files
//! through it, so one artifact is named, redacted and written the same way wherever it is saved.
//! The `.zip`s themselves are named here too ([`sweep_zip_name`], [`repeat_group_zip_name`]).

use std::borrow::{Borrow, Cow};

use crate::core::format::file_stem;

use crate::core::schema::error::ArtifactError;
use crate::core::schema::ArtifactV1;

/// One artifact ready to save.
#[derive(Clone, Debug, PartialEq)]
pub struct ArtifactFile {
    /// The file's name ([`ArtifactV1::file_name`]): safe characters only, `.json` at the end.
    pub name: String,
    /// The file's text, byte for byte as [`ArtifactV1::to_json_text`] writes it.
    pub text: String,
}

impl ArtifactFile {
    /// The file of `artifact`, its `base_url` replaced by
    /// [`REDACTED_BASE_URL`](crate::core::schema::REDACTED_BASE_URL) when `redact`
    /// (`artifact` itself is left as it is). Fails when the artifact holds a value JSON cannot
    /// (a non-finite time).
    pub fn of(artifact: &ArtifactV1, redact: bool) -> Result<Self, ArtifactError> {
        let artifact = if redact {
            let mut redacted = artifact.clone();
            redacted.redact_base_url();
            Cow::Owned(redacted)
        } else {
            Cow::Borrowed(artifact)
        };
        Ok(Self {
            name: artifact.file_name(),
            text: artifact.to_json_text()?,
        })
    }
}

/// The name a sweep's `.zip` is saved under: the sweep's id (its first run's `sweep` block),
/// made safe, or `sweep.zip` when the runs carry none.
pub fn sweep_zip_name<A: Borrow<ArtifactV1>>(runs: &[A]) -> String {
    let id = runs
        .first()
        .and_then(|run| run.borrow().sweep.as_ref())
        .map_or("sweep", |block| block.id.as_str());
    format!("{}.zip", file_stem(id, "sweep"))
}

/// The name a repeat group's `.zip` is saved under: the group's id (its first run's `repeat`
/// block), made safe, or `repeats.zip` when the runs carry none.
pub fn repeat_group_zip_name<A: Borrow<ArtifactV1>>(runs: &[A]) -> String {
    let id = runs
        .first()
        .and_then(|run| run.borrow().repeat.as_ref())
        .map_or("repeats", |block| block.group_id.as_str());
    format!("{}.zip", file_stem(id, "repeats"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::schema::repeat::RepeatBlock;
    use crate::core::schema::sweep::{SweepBlock, SweepVariable};
    use crate::core::schema::REDACTED_BASE_URL;

    fn reference() -> ArtifactV1 {
        serde_json::from_str(include_str!(
            "../../../tests/fixtures/reference-artifact.json"
        ))
        .expect("the reference artifact")
    }

    #[test]
    fn unredacted_the_file_is_the_artifact_as_written() {
        let artifact = reference();
        let file = ArtifactFile::of(&artifact, false).expect("writes");
        assert_eq!(file.name, artifact.file_name());
        assert_eq!(file.name, format!("{}.json", artifact.run_id));
        assert_eq!(file.text, artifact.to_json_text().expect("writes"));
    }

    #[test]
    fn redacted_the_address_and_anything_in_it_are_gone() {
        let mut artifact = reference();
        // A base URL that carries a credential, as a hostile or careless one can.
        artifact.base_url =
            "http://user:sk-live-secret@10.0.0.7:8000/v1?api_key=sk-live-secret".to_owned();
        let file = ArtifactFile::of(&artifact, true).expect("writes");
        assert!(!file.text.contains("sk-live-secret"), "no key in the file");
        assert!(!file.text.contains("10.0.0.7"), "no address in the file");
        let written: serde_json::Value = serde_json::from_str(&file.text).expect("JSON");
        assert_eq!(written["base_url"], REDACTED_BASE_URL);
        assert_eq!(file.name, artifact.file_name(), "the name does not change");
        assert!(
            artifact.base_url.contains("10.0.0.7"),
            "the artifact kept in the page is not touched"
        );
        // Everything but the address is the unredacted file's.
        let mut expected = artifact.clone();
        expected.redact_base_url();
        assert_eq!(file.text, expected.to_json_text().expect("writes"));
        let plain = ArtifactFile::of(&artifact, false).expect("writes");
        assert!(plain.text.contains("10.0.0.7"), "only when asked");
    }

    #[test]
    fn the_name_is_safe_and_says_which_repeat() {
        let mut artifact = reference();
        artifact.run_id = "../<script>alert(1)</script>".to_owned();
        artifact.repeat = Some(RepeatBlock {
            group_id: "g".to_owned(),
            index: 2,
            count: 3,
        });
        let file = ArtifactFile::of(&artifact, true).expect("writes");
        // No path, no markup, no hidden file: the name is safe to save under.
        assert_eq!(
            file.name,
            "benchmark..__script_alert_1___script_-repeat03.json"
        );
    }

    #[test]
    fn a_value_json_cannot_hold_is_an_error_not_a_file() {
        let mut artifact = reference();
        artifact.wall_clock_ms = f64::NAN;
        assert!(matches!(
            ArtifactFile::of(&artifact, true),
            Err(ArtifactError::NonFiniteValue { .. })
        ));
    }

    #[test]
    fn a_zip_is_named_after_its_sweep_or_group_made_safe() {
        let mut first = reference();
        let runs = [first.clone()];
        assert_eq!(sweep_zip_name(&runs), "sweep.zip");
        assert_eq!(repeat_group_zip_name(&runs), "repeats.zip");
        assert_eq!(sweep_zip_name::<ArtifactV1>(&[]), "sweep.zip");
        first.sweep = Some(SweepBlock {
            id: "sweep-run 1/../x".to_owned(),
            step_index: 0,
            step_count: 2,
            variable: SweepVariable::Concurrency,
            value: 1.0,
            spec: "concurrency:1,2".to_owned(),
            stop_reason: None,
        });
        first.repeat = Some(RepeatBlock {
            group_id: "repeat-run1-step01".to_owned(),
            index: 0,
            count: 2,
        });
        let runs = [std::rc::Rc::new(first), std::rc::Rc::new(reference())];
        assert_eq!(sweep_zip_name(&runs), "sweep-run_1_.._x.zip");
        assert_eq!(repeat_group_zip_name(&runs), "repeat-run1-step01.zip");
    }
}
