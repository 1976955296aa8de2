fn helper() -> u32 {
    41
}

fn other() {}
