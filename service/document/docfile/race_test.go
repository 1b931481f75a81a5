//go:build race

package docfile_test

// raceDetector: this test binary runs under the race detector, whose shadow memory is resident
// beside every byte the code writes, so resident-memory bounds double.
const raceDetector = true
