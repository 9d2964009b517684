package s3url

import (
	"testing"
)

func TestParseURL(t *testing.T) {
	l, err := ParseURL("s3://bucket/run-7/out/?endpoint=http%3A%2F%2F10.0.0.1%3A9000&region=eu-1&env-prefix=S3_1_")
	if err != nil {
		t.Fatal(err)
	}
	if l != (Location{Bucket: "bucket", Prefix: "run-7/out", Endpoint: "http://10.0.0.1:9000", Region: "eu-1", EnvPrefix: "S3_1_"}) || l.String() != "s3://bucket/run-7/out" {
		t.Fatalf("%+v", l)
	}
	if l, err := ParseURL("s3://bucket"); err != nil || l.Prefix != "" || l.Key("a/b") != "a/b" {
		t.Fatalf("%+v %v", l, err)
	}
	for _, bad := range []string{"/data", "s3://", "s3:///x", "s3://b/a/../c"} {
		if _, err := ParseURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if l.Key("x") != "run-7/out/x" {
		t.Fatal(l.Key("x"))
	}
}
