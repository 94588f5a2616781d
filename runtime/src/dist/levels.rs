//! A field's time levels on any target: a ping-pong pair, or several levels for schemes
//! that read more than the current state.

use crate::buffer::Scalar;
use crate::error::{Error, Result};
use crate::grid::{check_shape, DeviceGrid, HostGrid, TargetGrid};

use super::Place;

/// Two grids for iterating `next = f(current)` without copies: launch into
/// [`PingPong::split`]'s first element, then [`PingPong::swap`]. The grids are the target's:
/// [`DeviceGrid`]s on one [`Device`], [`SplitGrid`](crate::dist::SplitGrid)s on
/// [`Devices`](crate::dist::Devices).
#[derive(Debug)]
pub struct PingPong<T: Scalar, G = DeviceGrid<T>> {
    grids: [G; 2],
    current: usize,
    _elem: std::marker::PhantomData<T>,
}

impl<T: Scalar, G: TargetGrid<T>> PingPong<T, G> {
    /// Both grids start as copies of `initial`, so boundary points a stencil never writes
    /// (a `fixed` boundary) keep their values in both.
    pub fn from_host<D>(device: &D, initial: &HostGrid<T>) -> Result<Self>
    where
        D: Place<Grid<T> = G>,
    {
        Ok(PingPong {
            grids: [device.upload(initial)?, device.upload(initial)?],
            current: 0,
            _elem: std::marker::PhantomData,
        })
    }
    /// The current state.
    pub fn current(&self) -> &G {
        &self.grids[self.current]
    }
    /// `(next, current)`: where to write the next state, and the current one to read.
    pub fn split(&mut self) -> (&mut G, &G) {
        let [a, b] = &mut self.grids;
        if self.current == 0 {
            (b, a)
        } else {
            (a, b)
        }
    }
    /// Makes the next state current.
    pub fn swap(&mut self) {
        self.current = 1 - self.current;
    }
}

/// Several time levels of one field, for schemes that read more than the current state
/// (leapfrog reads two: `u^{n+1} = 2u^n - u^{n-1} + ...`), without copies. It holds one grid
/// per level read plus one to write: [`Levels::split`] gives the grid the next level goes
/// into and the levels read, newest first; [`Levels::rotate`] makes the written level the
/// current one, and the oldest one's grid the next to write. With one level read it is a
/// [`PingPong`].
#[derive(Debug)]
pub struct Levels<T: Scalar, G = DeviceGrid<T>> {
    /// The levels read, newest first (never empty).
    levels: std::collections::VecDeque<G>,
    /// The grid the next level is written into.
    next: G,
    _elem: std::marker::PhantomData<T>,
}

/// The levels a step reads, newest first: `past[0]` is the current state, `past[1]` the one
/// before it, ...
#[derive(Debug)]
pub struct Past<'a, G> {
    levels: Vec<&'a G>,
}

impl<'a, G> Past<'a, G> {
    /// Level `k` back (0: the current state), or `None` beyond the levels kept.
    pub fn get(&self, k: usize) -> Option<&'a G> {
        self.levels.get(k).copied()
    }
    /// How many levels are read.
    pub fn len(&self) -> usize {
        self.levels.len()
    }
    /// Whether no level is kept (never: a [`Levels`] keeps at least one).
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty()
    }
}

impl<G> std::ops::Index<usize> for Past<'_, G> {
    type Output = G;
    /// Level `k` back; panics beyond the levels kept, like a slice (use [`Past::get`] to ask).
    fn index(&self, k: usize) -> &G {
        self.levels[k]
    }
}

impl<T: Scalar, G: TargetGrid<T>> Levels<T, G> {
    /// Levels from their initial states, oldest first (leapfrog: `&[&u_previous, &u_current]`),
    /// plus one grid to write, a copy of the newest (so that points a `fixed` boundary never
    /// writes keep their values).
    pub fn from_hosts<D>(device: &D, states: &[&HostGrid<T>]) -> Result<Self>
    where
        D: Place<Grid<T> = G>,
    {
        let Some(newest) = states.last() else {
            return Err(Error::InvalidConfig(
                "time levels need at least one initial state (oldest first)".into(),
            ));
        };
        for (i, s) in states.iter().enumerate() {
            check_shape(&format!("time level {i}"), newest.shape(), s.shape())?;
        }
        let mut levels = std::collections::VecDeque::with_capacity(states.len());
        for s in states.iter().rev() {
            levels.push_back(device.upload(s)?);
        }
        Ok(Levels {
            levels,
            next: device.upload(newest)?,
            _elem: std::marker::PhantomData,
        })
    }
    /// How many levels a step reads.
    pub fn depth(&self) -> usize {
        self.levels.len()
    }
    /// The current state (the newest level).
    pub fn current(&self) -> &G {
        self.levels.front().unwrap_or(&self.next)
    }
    /// `(next, past)`: the grid to write the next level into, and the levels to read, newest
    /// first.
    pub fn split(&mut self) -> (&mut G, Past<'_, G>) {
        let levels = self.levels.iter().collect();
        (&mut self.next, Past { levels })
    }
    /// Makes the level just written the current one; the oldest level's grid is written next.
    pub fn rotate(&mut self) {
        if let Some(oldest) = self.levels.pop_back() {
            let written = std::mem::replace(&mut self.next, oldest);
            self.levels.push_front(written);
        }
    }
}
