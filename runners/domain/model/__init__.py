"""The cost models and their parameters (pure: no MPI, no store).

`closed_form` prices an algorithm from alpha, beta and gamma; `pricing` prices its real
schedule round by round; `overheads` names each implementation family's software overheads;
`fitting` fits the parameters to medians; `calibration` builds a calibration's row and
`calibration_id` names one."""
