//! Summaries of repeated measurements: median and min–max spread, and the
//! Oxok/Linux ratio of two medians.

/// Median, minimum and maximum of a non-empty set of values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// How many values.
    pub n: usize,
}

impl Summary {
    /// `None` for no values. The median of an even count is the mean of the
    /// middle two.
    pub(crate) fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        Some(Summary { median, min: v[0], max: v[n - 1], n })
    }
}

/// Oxok's median over Linux's: below 1 means Oxok needs less time or memory.
/// `None` when either side is missing or Linux's median is not positive.
pub(crate) fn ratio(oxok: Option<Summary>, linux: Option<Summary>) -> Option<f64> {
    let (o, l) = (oxok?, linux?);
    (l.median > 0.0 && o.median >= 0.0).then(|| o.median / l.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        assert_eq!(Summary::of(&[]), None);
        let s = Summary::of(&[5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (3.0, 1.0, 5.0, 3));
        assert_eq!(Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert_eq!(Summary::of(&[7.0]).unwrap().median, 7.0);
    }

    #[test]
    fn ratio_needs_both_sides() {
        let a = Summary::of(&[100.0]);
        let b = Summary::of(&[400.0]);
        assert_eq!(ratio(a, b), Some(0.25));
        assert_eq!(ratio(None, b), None);
        assert_eq!(ratio(a, None), None);
        assert_eq!(ratio(a, Summary::of(&[0.0])), None);
    }
}
