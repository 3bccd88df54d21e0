//! `read_pod_output`: what a child committed since a cursor, read from its log files.
