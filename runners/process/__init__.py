"""Process plumbing of the parent process: stop signals held while the store is in use
(`stops`), children that end with their parent (`lifetime`) and the test hooks that park a
command at a named stage (`faults`). The store, analysis, jobs, CLI and dashboard may import it;
it imports only the domain."""
