//go:build !unix

package tritonclient

import "errors"

// createRegion fails: system shared memory needs mmap.
func createRegion(string, int) ([]byte, error) {
	return nil, errors.New("system shared memory needs a Unix system")
}

func removeRegion(string, []byte) error { return nil }
