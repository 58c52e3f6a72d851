// Package pgtest gives tests a throwaway PostgreSQL database on the server
// named by $OPTIMIZE_TEST_POSTGRES (an admin DSN; .ci/run starts a server
// and sets it). Tests that need one skip, saying so, where it is unset.
package pgtest

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// EnvVar names the admin DSN.
const EnvVar = "OPTIMIZE_TEST_POSTGRES"

// DB creates a fresh database for t and returns its DSN; it is dropped
// (connections forced closed) when the test ends.
func DB(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvVar)
	if admin == "" {
		t.Skipf("PostgreSQL tests skipped: set %s to an admin DSN such as postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (.ci/run starts a server and sets it)", EnvVar)
	}
	// A connection of its own: creating and dropping databases is no
	// part of the store's API.
	st, err := gorm.Open(postgres.Open(admin), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("%s: %v", EnvVar, err)
	}
	sqlDB, err := st.DB()
	if err != nil {
		t.Fatalf("%s: %v", EnvVar, err)
	}
	name := fmt.Sprintf("optimize_%s_%d", strings.ToLower(regexp.MustCompile(`\W+`).ReplaceAllString(t.Name(), "_")), rand.IntN(1e6))
	if len(name) > 63 { // PostgreSQL's identifier limit
		name = fmt.Sprintf("optimize_%d", rand.IntN(1e9))
	}
	if err := st.Exec(`CREATE DATABASE "` + name + `"`).Error; err != nil {
		sqlDB.Close()
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		defer sqlDB.Close()
		if err := st.Exec(`DROP DATABASE IF EXISTS "` + name + `" WITH (FORCE)`).Error; err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
