//! Measurement: clocks and CPU time, the kernel's own I/O counters, cache control and
//! page-cache residency, and the environment a result was measured in. Nothing here knows
//! which engine or subcommand is running.

pub mod baseline;
pub mod cache;
pub mod caveat;
pub mod checks;
pub mod child;
pub mod compression;
pub mod converge;
pub mod cpus;
pub mod devstats;
pub mod diskstats;
pub mod env;
pub mod extents;
pub mod external;
pub mod host;
pub mod inflight;
pub mod interference;
pub mod knee;
pub mod latency;
pub mod link;
pub mod medium;
pub mod meter;
pub mod model;
pub mod percentile;
pub mod pressure;
pub mod printed;
pub mod probe;
pub mod procio;
pub mod series;
pub mod stats;
pub mod steady;
pub mod timer;
pub mod verdict;
pub mod wallclock;
pub mod writeback;
pub mod writecache;
