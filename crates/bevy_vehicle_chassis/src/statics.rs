//! How a body rests on its springs: the static deflections behind the suspensions' preloads.

/// The static deflection (m) of each spring under a rigid body of weight `weight` (N) whose
/// centre of mass lies at `center` (m along the chassis's Z), the springs given as `(z, k)`:
/// position along Z (m) and stiffness (N/m). The body heaves and pitches on its springs alone
/// (`pivot = None`; for two springs, the lever rule), or pivots about a rigid support at
/// `pivot` (m along Z; a trailer's coupling), which then carries the rest of the weight.
///
/// `None` where the springs cannot hold the body so: no springs, one spring (or springs all at
/// one place) not under the centre of mass, or a pivot at the springs' place.
pub fn static_deflections(
    weight: f64,
    center: f64,
    springs: &[(f64, f64)],
    pivot: Option<f64>,
) -> Option<Vec<f64>> {
    match pivot {
        // Moment about the pivot: Σ k·θ·a² = W·(z_c − z_h), with `a = z − z_h`.
        Some(pivot) => {
            let turn: f64 = springs.iter().map(|&(z, k)| k * (z - pivot).powi(2)).sum();
            let theta = weight * (center - pivot) / turn;
            theta
                .is_finite()
                .then(|| springs.iter().map(|&(z, _)| theta * (z - pivot)).collect())
        }
        // Heave `h` and pitch `p` about the centre of mass: Σk·(h + p·a) = W, Σk·a·(h + p·a) = 0.
        None => {
            let (mut k, mut ka, mut kaa) = (0.0, 0.0, 0.0);
            for &(z, stiffness) in springs {
                let a = z - center;
                k += stiffness;
                ka += stiffness * a;
                kaa += stiffness * a * a;
            }
            let det = k * kaa - ka * ka;
            let (heave, pitch) = if det > 1e-9 * k * kaa.max(1e-12) {
                (weight * kaa / det, -weight * ka / det)
            } else if k > 0.0 && ka.abs() < 1e-9 * k {
                (weight / k, 0.0)
            } else {
                return None;
            };
            Some(
                springs
                    .iter()
                    .map(|&(z, _)| heave + pitch * (z - center))
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::static_deflections;

    /// Two springs: the lever rule; with a pivot, the moment about it.
    #[test]
    fn lever_rule_and_pivot() {
        let d = static_deflections(1000.0, 0.5, &[(0.0, 1e4), (2.0, 1e4)], None).unwrap();
        // 750 N on the spring at 0, 250 N at 2.
        assert!((d[0] * 1e4 - 750.0).abs() < 1e-9 && (d[1] * 1e4 - 250.0).abs() < 1e-9);
        let d = static_deflections(1000.0, 1.0, &[(2.0, 1e4)], Some(0.0)).unwrap();
        // Half on the pivot, half on the spring.
        assert!((d[0] * 1e4 - 500.0).abs() < 1e-9);
        assert!(static_deflections(1000.0, 1.0, &[(0.0, 1e4)], None).is_none());
    }
}
