//! The slab layout every split target shares: a grid split along its slowest axis into one
//! slab per part, each with halo planes on the sides it shares, and the halo bookkeeping of
//! split grids.

use crate::error::{Error, Result};
use crate::grid::Shape;
use crate::program::Event;

/// The split of one grid shape: the axis, each slab's own planes and its halo planes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub(crate) shape: Shape,
    pub(crate) axis: usize,
    /// Elements per plane (the product of the other extents).
    pub(crate) plane: usize,
    /// Each slab's own planes `lo..hi` along the axis.
    pub(crate) owned: Vec<(usize, usize)>,
    pub(crate) depth: usize,
    pub(crate) periodic: bool,
}

impl Layout {
    pub(crate) fn new(shape: Shape, weights: &[f64], depth: usize, periodic: bool) -> Result<Layout> {
        let axis = shape.rank().max(1) - 1;
        let dims = shape.dims();
        let n = dims[axis];
        let plane: usize = dims
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != axis)
            .map(|(_, &d)| d)
            .product();
        let parts = weights.len();
        let total: f64 = weights.iter().sum();
        let mut bounds = vec![0usize];
        let mut acc = 0.0;
        for w in weights {
            acc += w;
            bounds.push(((acc / total) * n as f64).round() as usize);
        }
        bounds[parts] = n;
        let owned: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
        // A halo is a neighbour's own planes: each slab needs `depth` of them to share.
        let exchanges = parts > 1 || periodic;
        if let Some((i, &(lo, hi))) = owned
            .iter()
            .enumerate()
            .find(|(_, &(lo, hi))| hi - lo == 0 || (exchanges && hi - lo < depth))
        {
            return Err(Error::InvalidConfig(format!(
                "grid {shape} split along axis {axis} among {parts} devices gives device {i} planes {lo}..{hi}; \
                 each needs at least {} (its halo depth): use fewer devices, a shallower `Devices::depth`, or a \
                 larger grid",
                if exchanges { depth.max(1) } else { 1 }
            )));
        }
        Ok(Layout {
            shape,
            axis,
            plane,
            owned,
            depth,
            periodic,
        })
    }

    /// The whole grid's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }
    /// The split axis (0 = x).
    pub fn axis(&self) -> usize {
        self.axis
    }
    /// Each device's own planes `lo..hi` along the split axis.
    pub fn owned(&self) -> &[(usize, usize)] {
        &self.owned
    }
    /// Halo planes per shared side.
    pub fn depth(&self) -> usize {
        self.depth
    }
    /// Whether the split axis wraps (the first and last slabs exchange).
    pub fn periodic(&self) -> bool {
        self.periodic
    }
    /// Halo planes below slab `i`.
    pub(crate) fn below(&self, i: usize) -> usize {
        if i > 0 || self.periodic {
            self.depth
        } else {
            0
        }
    }
    /// Halo planes above slab `i`.
    pub(crate) fn above(&self, i: usize) -> usize {
        if i + 1 < self.owned.len() || self.periodic {
            self.depth
        } else {
            0
        }
    }
    /// Planes slab `i` holds (halo included).
    pub(crate) fn planes(&self, i: usize) -> usize {
        let (lo, hi) = self.owned[i];
        self.below(i) + (hi - lo) + self.above(i)
    }
    /// The shape of slab `i` as its device sees it.
    pub(crate) fn part_shape(&self, i: usize) -> Shape {
        let mut d = self.shape.dims();
        d[self.axis] = self.planes(i);
        match self.shape.rank() {
            1 => Shape::d1(d[0]),
            2 => Shape::d2(d[0], d[1]),
            _ => Shape::d3(d[0], d[1], d[2]),
        }
    }
    /// Slab `i`'s planes (halos included) taken from the whole grid's `data`.
    pub(crate) fn slab<T: Copy>(&self, i: usize, data: &[T]) -> Vec<T> {
        let p = self.plane;
        (0..self.planes(i))
            .flat_map(|k| {
                let g = self.global_plane(i, k);
                data[g * p..(g + 1) * p].iter().copied()
            })
            .collect()
    }

    /// Where slab `i` exchanges its halos, in elements of its buffer (`(depth − keep) · plane`
    /// each): `(send from, receive at)` for its lower and its upper side, `None` where it has no
    /// halo. The `keep` halo planes next to the own planes hold current values and are left
    /// out: a lower halo keeps its last `keep` planes, an upper one its first, so the lower
    /// side sends from `keep` planes further in and the upper side receives `keep` further out.
    pub(crate) fn edges(&self, i: usize, keep: usize) -> [Option<(usize, usize)>; 2] {
        let (p, d) = (self.plane, self.depth);
        let keep = keep.min(d);
        let own = self.owned[i].1 - self.owned[i].0;
        let low = (self.below(i) > 0).then(|| ((self.below(i) + keep) * p, 0));
        let high = (self.above(i) > 0).then(|| ((self.below(i) + own - d) * p, (self.below(i) + own + keep) * p));
        [low, high]
    }

    /// Where slab `i`'s first point (its halo's, where it has one below) lies in the whole grid,
    /// wrapped where periodic.
    pub(crate) fn origin(&self, i: usize) -> [usize; 3] {
        let mut o = [0; 3];
        o[self.axis] = self.global_plane(i, 0);
        o
    }

    /// The whole grid's plane that slab `i`'s plane `k` holds (wrapping where periodic).
    pub(crate) fn global_plane(&self, i: usize, k: usize) -> usize {
        let n = self.shape.dims()[self.axis] as isize;
        let p = self.owned[i].0 as isize - self.below(i) as isize + k as isize;
        p.rem_euclid(n) as usize
    }
}

pub(crate) fn check_layout(what: &str, grid: &Layout, plan: &Layout) -> Result<()> {
    if grid == plan {
        return Ok(());
    }
    // Name what differs: two splits that print alike must differ elsewhere.
    let differs = if grid.shape != plan.shape {
        format!("has shape {}, the plan {}", grid.shape, plan.shape)
    } else if grid.owned != plan.owned {
        format!("is split as {:?}, the plan as {:?}", grid.owned(), plan.owned())
    } else if grid.depth != plan.depth {
        format!(
            "has halos {} planes deep, the plan needs {} (the depth a `Devices` or `Ranks` grid is made with \
             must be the plan's: `Devices::depth`)",
            grid.depth, plan.depth
        )
    } else if grid.periodic != plan.periodic {
        format!(
            "is {}periodic along the split axis, the plan {}periodic",
            if grid.periodic { "" } else { "not " },
            if plan.periodic { "" } else { "not " }
        )
    } else {
        format!("is split as {:?}, the plan as {:?}", grid.owned(), plan.owned())
    };
    Err(Error::InvalidConfig(format!(
        "{what} {differs}: make grids and plan from the same `Devices` (or `Ranks`), shape and halo depth"
    )))
}

/// Checks that every grid argument is split as the plan (`layout`), exchanges each input
/// whose valid halo is shallower than the launch's `reach`, and returns the depth the
/// outputs' halos are valid to before the launch's reach is taken off.
pub(crate) fn refresh_inputs<'a>(
    owner: &str,
    layout: &Layout,
    reach: usize,
    grids: impl Iterator<Item = (&'a str, &'a dyn Halo)>,
) -> Result<usize> {
    let mut valid = layout.depth;
    for (name, g) in grids {
        check_layout(&format!("grid `{name}` of {owner}"), g.layout(), layout)?;
        if g.valid_depth() < reach {
            g.exchange()?;
        }
        valid = valid.min(g.valid_depth());
    }
    Ok(valid)
}

/// A grid argument's view for a split launch: its layout, valid depth and exchange.
pub(crate) trait Halo {
    fn layout(&self) -> &Layout;
    fn valid_depth(&self) -> usize;
    fn exchange(&self) -> Result<()>;
    /// After a launch wrote the grid: its halo holds current values this deep.
    fn set_valid(&self, depth: usize);
    /// Starts an exchange that leaves the `keep` current halo planes alone (see
    /// [`SplitGrid::exchange_start`]); a grid that cannot overlap exchanges it here.
    fn exchange_start(&self, _keep: usize) -> Result<()> {
        self.exchange()
    }
    /// Completes [`Halo::exchange_start`]: the halo writes, `(slab, event)`, on the devices'
    /// transfer queues; none where the exchange was already complete.
    fn exchange_finish(&self) -> Result<Vec<(usize, Event)>> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_follow_weights_and_cover_the_axis() {
        let l = Layout::new(Shape::d2(10, 100), &[1.0, 3.0], 4, false).unwrap();
        assert_eq!(l.owned(), &[(0, 25), (25, 100)]);
        assert_eq!((l.below(0), l.above(0), l.below(1), l.above(1)), (0, 4, 4, 0));
        assert_eq!(l.part_shape(1), Shape::d2(10, 79));
        assert_eq!(l.global_plane(1, 0), 21);
        // Slab 0 sends its top 4 planes (21..25 at element 210) and receives above them (250);
        // slab 1 sends its first own planes (after its 4-plane halo) and receives at 0.
        assert_eq!(l.edges(0, 0), [None, Some((210, 250))]);
        assert_eq!(l.edges(1, 0), [Some((40, 0)), None]);
        // Keeping one current plane: slab 1 sends from one plane further in, slab 0 receives
        // one plane further out.
        assert_eq!(l.edges(0, 1), [None, Some((210, 260))]);
        assert_eq!(l.edges(1, 1), [Some((50, 0)), None]);
        let data: Vec<u32> = (0..1000).collect();
        assert_eq!(l.slab(1, &data)[..2], [210, 211]);
        let p = Layout::new(Shape::d1(12), &[1.0, 1.0, 1.0], 2, true).unwrap();
        assert_eq!(p.owned(), &[(0, 4), (4, 8), (8, 12)]);
        assert_eq!((p.global_plane(0, 0), p.global_plane(2, 7)), (10, 1));
        // Too thin a slab for its halo is an error naming the slab.
        let e = Layout::new(Shape::d3(4, 4, 10), &[1.0, 1.0, 1.0], 4, false).unwrap_err();
        assert!(e.to_string().contains("device 0 planes 0..3"), "{e}");
        // One device, not periodic: no halo, any extent.
        assert!(Layout::new(Shape::d2(3, 1), &[1.0], 8, false).is_ok());
    }
}
