//! The rosetta template benchmarks' "big table" (100 × 100 numbers) and "teams" cases,
//! and TechEmpower's fortunes page, rendered to a `String` by kiln-html, maud and
//! sailfish. Each engine renders the same bytes (checked before timing).
//!
//! `cargo run --release --manifest-path bench/templates/Cargo.toml`; prints the median
//! time per render of each engine and its ratio to kiln-html. A project of its own
//! under `bench/`, so that nothing of a benchmark sits in `crates/`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use kiln_html::{Document, Flow, Fragment, html};
use sailfish::TemplateOnce;

struct Team {
    name: String,
    score: u8,
}

struct Fortune {
    id: i32,
    message: String,
}

fn table(size: usize) -> Vec<Vec<usize>> {
    (0..size).map(|_| (0..size).collect()).collect()
}

fn teams() -> Vec<Team> {
    [("Jiangsu", 43), ("Beijing", 27), ("Guangzhou", 22), ("Shandong", 12)]
        .into_iter()
        .map(|(name, score)| Team { name: name.into(), score })
        .collect()
}

fn fortunes() -> Vec<Fortune> {
    let messages = [
        "<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
        "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
        "A computer program does what you tell it to do, not what you want it to do.",
        "A computer scientist is someone who fixes things that aren't broken.",
        "A list is only as strong as its weakest link. — Donald Knuth",
        "Additional fortune added at request time.",
        "After enough decimal places, nobody gives a damn.",
        "Any program that runs right is obsolete.",
        "Computers make very fast, very accurate mistakes.",
        "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen",
        "Feature: A bug with seniority.",
        "fortune: No such file or directory",
        "フレームワークのベンチマーク",
    ];
    messages.iter().enumerate().map(|(i, m)| Fortune { id: i as i32, message: (*m).into() }).collect()
}

fn kiln_big_table(table: &[Vec<usize>]) -> String {
    let page: Fragment<Flow> = html! {
        table { @for row in table { tr { @for col in row { td { (col) } } } } }
    };
    page.into_string()
}

fn maud_big_table(table: &[Vec<usize>]) -> String {
    maud::html! {
        table { @for row in table { tr { @for col in row { td { (col) } } } } }
    }
    .into_string()
}

#[derive(TemplateOnce)]
#[template(path = "big-table.stpl")]
struct SailfishBigTable<'a> {
    table: &'a [Vec<usize>],
}

fn kiln_teams(year: u16, teams: &[Team]) -> String {
    let page: Fragment<Document> = html! {
        html lang="en" {
            head { title { (year) } }
            body {
                h1 { "CSL " (year) }
                ul {
                    @for (idx, team) in teams.iter().enumerate() {
                        li .champion[idx == 0] { b { (team.name) } ": " (team.score) }
                    }
                }
            }
        }
    };
    page.into_string()
}

fn maud_teams(year: u16, teams: &[Team]) -> String {
    maud::html! {
        (maud::DOCTYPE)
        html lang="en" {
            head { title { (year) } }
            body {
                h1 { "CSL " (year) }
                ul {
                    @for (idx, team) in teams.iter().enumerate() {
                        li class=[(idx == 0).then_some("champion")] { b { (team.name) } ": " (team.score) }
                    }
                }
            }
        }
    }
    .into_string()
}

#[derive(TemplateOnce)]
#[template(path = "teams.stpl")]
struct SailfishTeams<'a> {
    year: u16,
    teams: &'a [Team],
}

/// TechEmpower's fortunes page, as `/fortunes` renders it.
fn kiln_fortunes(fortunes: &[Fortune]) -> String {
    let page: Fragment<Document> = html! {
        html lang="en" {
            head { title { "Fortunes" } }
            body {
                table {
                    tr { th { "id" } th { "message" } }
                    @for fortune in fortunes {
                        tr { td { (fortune.id) } td { (fortune.message) } }
                    }
                }
            }
        }
    };
    page.into_string()
}

fn maud_fortunes(fortunes: &[Fortune]) -> String {
    maud::html! {
        (maud::DOCTYPE)
        html lang="en" {
            head { title { "Fortunes" } }
            body {
                table {
                    tr { th { "id" } th { "message" } }
                    @for fortune in fortunes {
                        tr { td { (fortune.id) } td { (fortune.message) } }
                    }
                }
            }
        }
    }
    .into_string()
}

#[derive(TemplateOnce)]
#[template(path = "fortunes.stpl")]
struct SailfishFortunes<'a> {
    fortunes: &'a [Fortune],
}

/// Renders per batch: enough for a batch of the first engine to take about 2 ms.
fn batch_size(render: &mut dyn FnMut() -> String) -> u32 {
    let mut batch = 1u32;
    loop {
        let t = Instant::now();
        for _ in 0..batch {
            black_box(render());
        }
        if t.elapsed() > Duration::from_millis(2) || batch >= 1 << 20 {
            return batch;
        }
        batch *= 2;
    }
}

/// Times the engines in turn, a batch each per round, so that a machine busy with
/// other work slows them alike; prints each engine's median time per render and its
/// ratio to the first engine's.
fn report<const N: usize>(case: &str, mut engines: [(&str, &mut dyn FnMut() -> String); N]) {
    let batch = batch_size(engines[0].1);
    let rounds = 51;
    let mut samples = vec![Vec::with_capacity(rounds); N];
    for _ in 0..rounds {
        for (i, (_, render)) in engines.iter_mut().enumerate() {
            let t = Instant::now();
            for _ in 0..batch {
                black_box(render());
            }
            samples[i].push(t.elapsed() / batch);
        }
    }
    let medians: Vec<Duration> = samples
        .iter_mut()
        .map(|s| {
            s.sort();
            s[rounds / 2]
        })
        .collect();
    let base = medians[0].as_secs_f64();
    for ((name, _), t) in engines.iter().zip(medians) {
        println!(
            "{case:<10} {name:<10} {:>10.3} µs  {:>5.2}x kiln-html",
            t.as_secs_f64() * 1e6,
            t.as_secs_f64() / base
        );
    }
}

fn main() {
    let table = table(100);
    let (year, teams) = (2015, teams());
    let fortunes = fortunes();

    let big = [
        kiln_big_table(&table),
        maud_big_table(&table),
        SailfishBigTable { table: &table }.render_once().expect("sailfish"),
    ];
    assert!(big.iter().all(|out| *out == big[0]), "the engines render different big tables");
    let team_pages = [
        kiln_teams(year, &teams),
        maud_teams(year, &teams),
        SailfishTeams { year, teams: &teams }.render_once().expect("sailfish"),
    ];
    assert!(team_pages.iter().all(|out| *out == team_pages[0]), "different teams pages: {team_pages:#?}");
    let fortune_pages = [
        kiln_fortunes(&fortunes),
        maud_fortunes(&fortunes),
        SailfishFortunes { fortunes: &fortunes }.render_once().expect("sailfish"),
    ];
    // sailfish also escapes `'`.
    let sailfish = fortune_pages[2].replace("&#039;", "'");
    assert!(
        fortune_pages[1] == fortune_pages[0] && sailfish == fortune_pages[0],
        "different fortunes: {fortune_pages:#?}"
    );

    report(
        "big-table",
        [
            ("kiln-html", &mut || kiln_big_table(black_box(&table))),
            ("maud", &mut || maud_big_table(black_box(&table))),
            ("sailfish", &mut || SailfishBigTable { table: black_box(&table) }.render_once().expect("sailfish")),
        ],
    );
    report(
        "teams",
        [
            ("kiln-html", &mut || kiln_teams(year, black_box(&teams))),
            ("maud", &mut || maud_teams(year, black_box(&teams))),
            ("sailfish", &mut || SailfishTeams { year, teams: black_box(&teams) }.render_once().expect("sailfish")),
        ],
    );
    report(
        "fortunes",
        [
            ("kiln-html", &mut || kiln_fortunes(black_box(&fortunes))),
            ("maud", &mut || maud_fortunes(black_box(&fortunes))),
            ("sailfish", &mut || SailfishFortunes { fortunes: black_box(&fortunes) }.render_once().expect("sailfish")),
        ],
    );
}
