//go:build tools

// Package tools pins the code generators the project runs (mdatagen), in a
// module of their own so their dependencies never enter the collector build.
package tools

import (
	_ "go.opentelemetry.io/collector/cmd/mdatagen"
)
