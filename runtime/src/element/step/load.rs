//! External forces on DOFs and their time dependence.

use crate::error::{Error, Result};

/// The time dependence of a load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeFunction {
    /// Always 1.
    Constant,
    /// `sin(2π f t)` under a Hann window of `cycles` periods, 0 afterwards.
    WindowedSine {
        /// Frequency in Hz.
        frequency: f64,
        /// Periods under the window.
        cycles: f64,
    },
}

impl TimeFunction {
    /// The value at time `t`.
    pub fn value(&self, t: f64) -> f64 {
        match *self {
            TimeFunction::Constant => 1.0,
            TimeFunction::WindowedSine { frequency, cycles } => {
                let duration = cycles / frequency;
                if !(0.0..=duration).contains(&t) {
                    return 0.0;
                }
                let window = 0.5 * (1.0 - (2.0 * std::f64::consts::PI * t / duration).cos());
                window * (2.0 * std::f64::consts::PI * frequency * t).sin()
            }
        }
    }
}

/// An external force: `F[dofs[i]] += weights[i] · time(t)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    /// Global DOF indices (`node · dofs + component`), each at most once.
    pub dofs: Vec<u32>,
    /// Force per DOF at time-function value 1.
    pub weights: Vec<f64>,
    /// The time dependence.
    pub time: TimeFunction,
}

impl Load {
    /// A point force `amplitude` on `component` of `node`, element of `dofs` DOFs per node.
    pub fn point(node: usize, dofs: usize, component: usize, amplitude: f64, time: TimeFunction) -> Load {
        Load {
            dofs: vec![dof_index(node, dofs, component)],
            weights: vec![amplitude],
            time,
        }
    }

    /// A force `total` spread along a straight edge of equally spaced `nodes` (end nodes take
    /// half a share: the consistent load of linear edges).
    pub fn edge(nodes: &[usize], dofs: usize, component: usize, total: f64, time: TimeFunction) -> Load {
        let segments = nodes.len().saturating_sub(1).max(1) as f64;
        let weights = (0..nodes.len())
            .map(|i| if nodes.len() > 1 && (i == 0 || i + 1 == nodes.len()) { 0.5 } else { 1.0 } * total / segments)
            .collect();
        Load {
            dofs: nodes.iter().map(|&n| dof_index(n, dofs, component)).collect(),
            weights,
            time,
        }
    }
}

/// `node · dofs + component`, saturating at `u32::MAX` (a DOF no model has, which
/// [`check_load`] refuses when the load is added).
fn dof_index(node: usize, dofs: usize, component: usize) -> u32 {
    let i = node.saturating_mul(dofs).saturating_add(component);
    u32::try_from(i).unwrap_or(u32::MAX)
}

/// Checks that a load names each DOF once, within `dofs`, with one weight per DOF.
pub(crate) fn check_load(load: &Load, dofs: usize) -> Result<()> {
    if load.dofs.len() != load.weights.len() || load.dofs.is_empty() {
        return Err(Error::LengthMismatch {
            what: "load weights".into(),
            expected: load.dofs.len(),
            found: load.weights.len(),
        });
    }
    if let Some(&i) = load.dofs.iter().find(|&&i| i as usize >= dofs) {
        return Err(Error::InvalidConfig(format!(
            "load on DOF {i}, but the model has {dofs} DOFs"
        )));
    }
    let mut sorted = load.dofs.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::InvalidConfig(
            "a load names a DOF twice; merge the weights".into(),
        ));
    }
    Ok(())
}
