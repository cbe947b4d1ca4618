package scenario

import (
	"errors"
	"os"
	"path/filepath"
)

// RepoRoot finds the module root (the directory with go.mod) from the working directory up,
// so the tools work from anywhere inside the repository.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "conformance", "scenarios")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the streamgen repository (no go.mod with conformance/scenarios above the working directory)")
		}
		dir = parent
	}
}
