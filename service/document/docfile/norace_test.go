//go:build !race

package docfile_test

const raceDetector = false
