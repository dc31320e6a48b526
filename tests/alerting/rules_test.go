// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package alerting

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAlertRules checks config/alerts.yaml with promtool and runs its unit tests
// (testdata/alerts_test.yaml): the tool error ratio alert fires above 50% over at least 5 calls
// per agent and tool, not at or below 50% nor under 5 calls, and counts a tool's first failures;
// the turn-failure alert fires for failed turn roots only (not subagent runs nor tool calls),
// for the 5 minutes after each failure; the spend alert fires per agent above $10 over the last
// hour (a new series' whole value counted), the token-burn alert above 10 million tokens in 10
// minutes.
func TestAlertRules(t *testing.T) {
	promtool := promtoolBinary(t)
	root := repoRoot(t)
	for _, args := range [][]string{
		{"check", "rules", "config/alerts.yaml"},
		{"test", "rules", "tests/alerting/testdata/alerts_test.yaml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %v:\n%s", args, out)
		t.Logf("promtool %v:\n%s", args, out)
	}
}
