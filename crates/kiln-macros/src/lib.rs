//! Derive macros for kiln.
