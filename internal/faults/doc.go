// Package faults holds process-level fault tests of the clinic server binary; it has no production code.
package faults
