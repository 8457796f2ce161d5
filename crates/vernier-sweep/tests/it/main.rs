//! Integration tests of the reading side: a fixed journal summarised and reported.

mod report;
