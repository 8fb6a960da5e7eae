//! Work the estimate splits over the machine's cores: stages scheduled independently of one
//! another, and the timelines of one round and of two. Each result depends on its input
//! alone, so the outcome is the same on any number of threads.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The machine's cores (1 where they cannot be told).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f` of each item, in order: on the calling thread, or on up to `threads` threads that
/// each take the next item left. A panic on a thread is resumed on the caller's.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return done;
                        };
                        done.push((i, f(item)));
                    }
                })
            })
            .collect();
        for w in workers {
            let done = w
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (i, r) in done {
                out[i] = Some(r);
            }
        }
    });
    out.into_iter()
        .map(|r| r.expect("every item is taken by a thread"))
        .collect()
}

#[cfg(test)]
mod tests {
    /// In order, whatever the thread that took each item: squares of 0..100 on 1, 2 and 7
    /// threads.
    #[test]
    fn results_in_the_items_order() {
        let items: Vec<u64> = (0..100).collect();
        let want: Vec<u64> = items.iter().map(|x| x * x).collect();
        for threads in [1, 2, 7] {
            assert_eq!(super::map(&items, threads, |x| x * x), want);
        }
        assert!(super::map(&[] as &[u64], 2, |x| *x).is_empty());
    }
}
