//go:build tools

// The command this module builds; the import keeps it in go.mod and go.sum.
package engines

import _ "sigs.k8s.io/kueue/cmd/kueue"
