//! permessage-deflate compiled out (no `ws-deflate` feature): a compressor and a
//! decompressor that cannot exist, since no [`DeflateParams`] can be made to build
//! them from. The socket's code stays one; the compiler proves these paths unreachable.

use super::{DeflateParams, InflateError};

/// A field no value fills: [`DeflateParams`] cannot be made without the feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CompiledOut {}

/// One connection's decompressor; there is none.
pub(crate) enum Inflater {}

impl Inflater {
    pub(crate) fn new(params: &DeflateParams) -> Self {
        match params.compiled_out {}
    }

    pub(crate) fn inflate(&mut self, _: &[u8], _: &mut Vec<u8>, _: usize) -> Result<(), InflateError> {
        match *self {}
    }

    pub(crate) fn finish(&mut self, _: &mut Vec<u8>, _: usize) -> Result<(), InflateError> {
        match *self {}
    }
}

/// One connection's compressor; there is none.
pub(crate) enum Deflater {}

impl Deflater {
    pub(crate) fn new(params: &DeflateParams, _: u32) -> Self {
        match params.compiled_out {}
    }

    pub(crate) fn compress(&mut self, _: &[u8], _: &mut Vec<u8>) {
        match *self {}
    }
}
