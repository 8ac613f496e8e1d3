//go:build !linux

package pgtest

import "errors"

// startCluster starts throwaway clusters on Linux only (see
// cluster_linux.go); elsewhere the tests use TEAMKIT_TEST_POSTGRES.
func startCluster(bin string) (*server, error) {
	return nil, errors.New("a throwaway PostgreSQL cluster is started on Linux only; set " + EnvURL)
}
