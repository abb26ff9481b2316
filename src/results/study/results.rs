//! The parts' results as the study keeps them: each under its part, of the part's own type
//! (`report::views::part::Kept::Result`), looked up by part and type.

use crate::workload::study::Part;
use std::any::Any;
use std::fmt::Debug;

/// A result of any part, as the study keeps it.
pub trait Stored: Any + Debug + Send + Sync {
    /// A copy.
    fn clone_box(&self) -> Box<dyn Stored>;
    /// For the typed look-up.
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any + Debug + Clone + Send + Sync> Stored for T {
    fn clone_box(&self) -> Box<dyn Stored> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The parts' results, each under its part, in the order kept.
#[derive(Debug, Default)]
pub struct Results(Vec<(Part, Box<dyn Stored>)>);

impl Clone for Results {
    fn clone(&self) -> Self {
        Self(
            self.0
                .iter()
                .map(|(p, r)| (*p, (**r).clone_box()))
                .collect(),
        )
    }
}

impl Results {
    /// The result `part` kept, if it kept one of type `T`.
    pub fn get<T: 'static>(&self, part: Part) -> Option<&T> {
        self.0
            .iter()
            .find(|(p, _)| *p == part)
            .and_then(|(_, r)| (**r).as_any().downcast_ref())
    }

    /// Every part's result, in the order kept.
    pub fn iter(&self) -> impl Iterator<Item = (Part, &dyn Stored)> {
        self.0.iter().map(|(p, r)| (*p, &**r))
    }

    /// Keeps `result` as `part`'s (in place of one it kept before).
    pub fn put<T: Stored>(&mut self, part: Part, result: T) {
        self.0.retain(|(p, _)| *p != part);
        self.0.push((part, Box::new(result)));
    }

    /// Keeps a result read back from a saved study.
    pub(crate) fn put_box(&mut self, part: Part, result: Box<dyn Stored>) {
        self.0.retain(|(p, _)| *p != part);
        self.0.push((part, result));
    }
}
