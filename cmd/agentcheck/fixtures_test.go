// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// TestFixtures runs the check the way `make check` does over every fixture
// root (testenv.FixtureRoots: ../shared/fixtures, ../shared/fixtures-new when
// present, and the repository's constructed corpus) with the built collector ($AGENTOTEL_COLLECTOR,
// set by `make test`) and ccusage.
func TestFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the built collector")
	}
	collector := os.Getenv("AGENTOTEL_COLLECTOR")
	if collector == "" {
		t.Skip("AGENTOTEL_COLLECTOR not set (make test sets it to the built collector)")
	}
	roots := testenv.FixtureRoots(t)
	vendortest.SkipIfAbsent(t, roots[0])
	args := []string{"-collector", collector, "-ccusage", testenv.Ccusage(t), "-fixtures-new", "none", "-fixtures-next", "none", "-constructed", "none"}
	for _, r := range roots {
		args = append(args, "-fixtures", r)
	}
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	t.Log(stdout.String())
	require.NotEqual(t, 2, code, "the check could not run: %s", stderr.String())
	assert.Contains(t, stdout.String(), "fixture roots: "+strings.Join(roots, ", "))

	assert.Equal(t, 0, code, "make check over the fixtures found problems (see the FAIL lines above)")
}

// TestHomeIsReadOnly: `make check HOME_DIR=…` writes nothing into the home
// it reads (state and outputs go to a temporary directory).
func TestHomeIsReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the built collector")
	}
	collector := os.Getenv("AGENTOTEL_COLLECTOR")
	if collector == "" {
		t.Skip("AGENTOTEL_COLLECTOR not set (make test sets it to the built collector)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	home := t.TempDir()
	_, err = stageFixtures([]string{filepath.Join(root, "testdata")}, home) // the repository's own testdata, as a home
	require.NoError(t, err)
	listing := func() map[string]string {
		files := map[string]string{}
		require.NoError(t, filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			files[p] = info.Mode().String() + " " + info.ModTime().String() + " " + strconv.FormatInt(info.Size(), 10)
			return nil
		}))
		return files
	}
	before := listing()
	require.NotEmpty(t, before)
	var stdout, stderr bytes.Buffer
	code := run([]string{"-collector", collector, "-home", home, "-turn-idle-timeout", "1s", "-quiet", "2s"}, &stdout, &stderr)
	require.NotEqual(t, 2, code, "the check could not run: %s", stderr.String())
	assert.Contains(t, stdout.String(), "== claude-code")
	assert.Equal(t, before, listing(), "the home is left as it was")
}
