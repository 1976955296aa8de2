use super::*;

/// One sample of each kind of secret, as it shows up in real output, and the part that must
/// not survive.
const SAMPLES: &[(&str, &str)] = &[
    ("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("secret=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("found wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY in env", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("token: ghp_a1B2c3D4a1B2c3D4a1B2c3D4a1B2c3D4a1B2", "ghp_a1B2c3D4a1B2c3D4a1B2c3D4a1B2c3D4a1B2"),
    ("slack xoxb-123456789012-abcdefghij", "xoxb-123456789012-abcdefghij"),
    ("OPENAI_API_KEY=sk-proj-x9x9x9x9x9x9x9x9x9x9x9x9x9x9x9x9", "x9x9x9x9x9x9x9x9x9x9"),
    ("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz012345"),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    ("DATABASE_URL=postgres://app:s3cr3t-P4ss@db.internal:5432/app", "s3cr3t-P4ss"),
    ("cloning https://user:ghs_pass1234word@git.example.com/r.git", "pass1234word"),
    ("DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
    ("export PGPASSWORD=letmein", "letmein"),
    ("redis.password=s3cr3t_v4lue!", "s3cr3t_v4lue!"),
    ("password: correct-horse-battery", "correct-horse-battery"),
    ("client_secret=\"8Q~aBcDeFgHiJkLmNoPqRsTuV\"", "8Q~aBcDeFgHiJkLmNoPqRsTuV"),
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGQxyz\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBGQxyz"),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAA",
    ),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq98s\nMIIEpAIBAAKCAQEA7bq98t\n", "MIIEpAIBAAKCAQEA7bq98"),
    ("sk_test_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("glpat-xxxxxxxxxxxxxxxxxxxx1234", "xxxxxxxxxxxxxxxxxxxx1234"),
    (
        "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    ),
    ("HF_TOKEN hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"),
    ("xapp-1-A0123456789-1234567890123-abcdef0123456789", "A0123456789-1234567890123"),
    ("https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    (
        "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
        "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
    ),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"),
    ("GROQ gsk_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH", "gsk_abcdefghijklmnopqrstuvwxyz"),
    (
        "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq",
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6",
    ),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ", "QQQQQQQQQQQQQQQQ"),
];

#[test]
fn every_kind_of_secret_is_redacted() {
    let mut missed = Vec::new();
    for (text, secret) in SAMPLES {
        let out = redact(text);
        if out.text.contains(secret) || out.count == 0 {
            missed.push(format!("{text:?} -> {:?}", out.text));
        }
    }
    assert!(missed.is_empty(), "{} of {} kinds passed unredacted:\n{}", missed.len(), SAMPLES.len(), missed.join("\n"));
}

#[test]
fn names_stay_and_values_go() {
    let text = "DB_PASSWORD=hunter2hunter2\nDATABASE_URL=postgres://app:pw123456@db/app\nan ordinary line with AKIA in it and a sha 3f786850e387550fdab836ed7e6dc881de23001b\n";
    expect_test::expect![[r#"
        DB_PASSWORD=[REDACTED:secret-setting]
        DATABASE_URL=postgres://app:[REDACTED:url-password]@db/app
        an ordinary line with AKIA in it and a sha 3f786850e387550fdab836ed7e6dc881de23001b
    "#]]
    .assert_eq(&redact(text).text);
}

/// Code and configuration that name secrets without holding one.
#[test]
fn settings_that_only_name_a_secret_are_left_alone() {
    let text = "let secret = h.outside.join(\"secret.txt\");\napi_key_env = \"OPENAI_API_KEY\"\napiKeyEnv = p.api_key_env\npassword_file=/run/secrets/db\nsecret: ${{ secrets.DEPLOY_KEY }}\nmax_tokens = 8192\ninput_tokens: 123456\n\"secretlint\": \"^11.2.5\",\n";
    let out = redact(text);
    assert_eq!(out.count, 0, "{}", out.text);
}

/// Ordinary output of builds, tests, git, package managers: nothing in it is a secret.
#[test]
fn ordinary_output_is_left_alone() {
    let text = include_str!("ordinary-output.txt");
    let out = redact(text);
    let changed: Vec<&str> = out.text.lines().filter(|l| l.contains("[REDACTED")).collect();
    assert_eq!(out.count, 0, "false positives in ordinary output:\n{}", changed.join("\n"));
}

#[test]
fn a_secret_split_across_chunks_is_still_redacted() {
    let text = "start\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq98s\nMIIEpAIBAAKCAQEA7bq98t\n-----END RSA PRIVATE KEY-----\ndone\n";
    for size in [1, 2, 3, 7, 16, 64] {
        let mut stream = StreamRedactor::default();
        let mut out = String::new();
        for chunk in text.as_bytes().chunks(size) {
            out.push_str(&stream.push(chunk));
        }
        out.push_str(&stream.finish());
        assert_eq!(out, redact(text).text, "chunks of {size}");
        assert_eq!(stream.count, 2);
    }
}
