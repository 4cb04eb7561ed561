//! `pocket_tts_text::normalize::normalize` on ~10 KB of mixed text per language (numbers, money,
//! dates, times, units, phone numbers, abbreviations, URLs, plain prose). The issue's
//! budget is 5 ms per 10 KB in release.
//!
//! ```sh
//! # criterion: text_normalize/<language> (time per 10 KB; throughput in bytes)
//! cargo bench -p pocket-tts-text --bench text_normalize
//! ```
//!
//! Without `--bench` a smoke test normalizes each text once and prints its size.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use pocket_tts_text::normalize::{normalize, Language, Normalizer};

const ENGLISH: &str = "On Jan. 12, 2026, at 10:30 a.m., Dr. Smith paid $19.99 for 2.5 kg of \
coffee and 3/4 lb of tea, a 12.5% discount on the list price of $22.85. The meeting at \
221 Baker St. ran from 3:30 pm to 5 pm; 1,234,567 people watched it online at \
https://www.example.com/live or wrote to press@example.org. Call 555-123-4567 or \
+1 (555) 987-6543 before 03/04/2026. In the 1980s, the 2nd edition of Chapter IV sold \
10,000 copies at -5 °C; Louis XIV would have paid €7.50 or £3. Version v1.2.3 fixes bug \
#42 & speeds things up 2x. It is 150 km from here, about 93 mi, a 1 h 40 min drive at \
90 km/h. The plain prose between the numbers is what most of a real text is made of, so \
this sentence has none at all, and neither does this one, which goes on for a while. ";

const FRENCH: &str = "Le lundi 12 janvier 2026 à 10 h 30, le Dr Martin a payé 19,99 € pour \
2,5 kg de café et 250 g de thé, soit une remise de 12,5 % sur le prix de 22,85 €. La \
réunion du 3 mars, au 12, av. des Champs-Élysées, a duré de 15h30 à 17 h ; \
1 234 567 personnes l'ont suivie sur https://www.exemple.fr/direct ou ont écrit à \
presse@exemple.fr. Appelez le 01 23 45 67 89 ou le +33 6 12 34 56 78 avant le \
03/04/2026. Au XIXe siècle, la 2e édition du chapitre IV s'est vendue à 10 000 \
exemplaires par -5 °C ; Louis XIV aurait payé 7,50 £ ou 3 $. La version 2.0.1 corrige \
le bogue n° 42. C'est à 150 km d'ici, un trajet de 1 h 40 à 90 km/h. M. et Mme Dupont, \
etc. La prose ordinaire entre les nombres forme l'essentiel d'un vrai texte, aussi \
cette phrase n'en contient-elle aucun, pas plus que celle-ci, qui continue un moment. ";

const SPANISH: &str = "El lunes 12 de enero de 2026, a las 10:30, el Dr. García pagó 19,99 € \
por 2,5 kg de café y 250 g de té, un descuento del 12,5 % sobre el precio de 22,85 €. La \
reunión del 3 de marzo, en la c/ Mayor, núm. 21, duró de las 15:30 a las 17 h; \
1.234.567 personas la siguieron en https://www.ejemplo.es/directo o escribieron a \
prensa@ejemplo.es. Llame al 912 345 678 o al +34 612 34 56 78 antes del 03/04/2026. En \
el siglo XIX, la 2.ª edición del capítulo IV vendió 10 000 ejemplares a -5 °C; Felipe VI \
habría pagado 7,50 £ o 3 $. La versión 2.0.1 corrige el error n.º 42. Está a 150 km de \
aquí, un trayecto de 1 h 40 min a 90 km/h. El Sr. y la Sra. Pérez, p. ej., etc. La prosa \
corriente entre los números es lo que forma la mayor parte de un texto real, así que \
esta frase no tiene ninguno, ni tampoco esta otra, que continúa durante un buen rato. ";

const PORTUGUESE: &str = "Na segunda-feira, 12 de janeiro de 2026, às 10h30, o Dr. Souza pagou \
R$ 19,99 por 2,5 kg de café e 250 g de chá, um desconto de 12,5% sobre o preço de \
R$ 22,85. A reunião de 3 de março, na Av. Paulista, nº 1.578, durou das 15h30 às 17h; \
1.234.567 pessoas a acompanharam em https://www.exemplo.com.br/ao-vivo ou escreveram \
para imprensa@exemplo.com.br. Ligue para (11) 98765-4321 ou +55 11 3456-7890 antes de \
03/04/2026. No século XIX, a 2ª edição do capítulo IV vendeu 10.000 exemplares a -5 °C; \
D. Pedro II teria pago € 7,50 ou US$ 3. A versão 2.0.1 corrige o erro nº 42. Fica a \
150 km daqui, a 90 km/h. O Sr. e a Sra. Lima, p. ex., etc. A prosa comum entre os \
números é o que forma a maior parte de um texto real, por isso esta frase não tem \
nenhum, nem esta outra, que continua por um bom tempo sem dizer nada de especial. ";

const GERMAN: &str = "Am Montag, dem 12. Januar 2026, um 10:30 Uhr zahlte Dr. Müller 19,99 € \
für 2,5 kg Kaffee und 250 g Tee, also 12,5 % Rabatt auf den Listenpreis von 22,85 €. Die \
Sitzung am 3. März in der Hauptstraße 221 dauerte von 15.30 Uhr bis 17 Uhr; \
1.234.567 Menschen sahen sie unter https://www.beispiel.de/live oder schrieben an \
presse@beispiel.de. Rufen Sie Tel. 030 123456 oder +49 30 12345678 vor dem 03.04.2026 \
an. Im 19. Jh. verkaufte sich die 2. Auflage von Kapitel IV 10.000-mal bei -5 °C; \
Ludwig XIV hätte 7,50 £ oder 3 $ gezahlt. Version 2.0.1 behebt Fehler Nr. 42 usw. Es \
sind 150 km von hier, z. B. eine Fahrt von 1 h 40 min mit 90 km/h, ca. 101 Minuten. Der \
gewöhnliche Text zwischen den Zahlen ist der größte Teil eines echten Textes, deshalb \
enthält dieser Satz keine, und dieser hier, der eine Weile weitergeht, auch nicht. ";

const DUTCH: &str = "Op maandag 12 januari 2026 om 10.30 uur betaalde dhr. Jansen € 19,99 \
voor 2,5 kg koffie en 250 g thee, een korting van 12,5% op de catalogusprijs van € 22,85. \
De vergadering van 3 maart in de Kerkstraat 21 duurde van 15:30 tot 17 uur; \
1.234.567 mensen keken mee op https://www.voorbeeld.nl/live of schreven naar \
pers@voorbeeld.nl. Bel 06-12345678 of +31 20 123 4567 vóór 03-04-2026. In de 19e eeuw \
verkocht de 2de druk van hoofdstuk IV 10.000 exemplaren bij -5 °C; Willem III had \
€ 7,50 of £ 3 betaald. Versie 2.0.1 verhelpt fout nr. 42, enz. Het is 150 km hiervandaan, \
bijv. een rit van 1 h 40 min met 90 km/h, d.w.z. ca. 101 minuten. De gewone tekst tussen \
de getallen is het grootste deel van een echte tekst, dus deze zin bevat er geen, en \
deze ook niet, al gaat hij nog een hele tijd door zonder ook maar iets te zeggen. ";

const ITALIAN: &str = "Lunedì 12 gennaio 2026 alle 10.30 il Dott. Rossi ha pagato € 19,99 per \
2,5 kg di caffè e 250 g di tè, con uno sconto del 12,5% sul prezzo di 22,85 €. La \
riunione del 3 marzo, in P.zza Garibaldi, è durata dalle 15:30 alle 17; \
1.234.567 persone l'hanno seguita su https://www.esempio.it/diretta o hanno scritto a \
stampa@esempio.it. Chiamate lo 06 1234 5678 o il +39 333 123 4567 prima del \
03/04/2026. Nel XIX secolo la 2ª edizione del capitolo IV vendette 10.000 copie a \
-5 °C; Luigi XIV avrebbe pagato 7,50 £ o 3 $. La versione 2.0.1 corregge il \
difetto n. 42. Dista 150 km da qui, un viaggio di 1 h e 40 min a 90 km/h. Il Sig. Neri e la \
Sig.ra Bianchi, ecc. La prosa comune tra i numeri costituisce la maggior parte di un \
testo vero, perciò questa frase non ne contiene alcuno, e nemmeno questa, che continua. ";

/// `unit` repeated to at least 10 KB.
fn ten_kb(unit: &str) -> String {
    unit.repeat(10 * 1024 / unit.len() + 1)
}

fn main() {
    let texts = [
        (Language::English, ten_kb(ENGLISH)),
        (Language::French, ten_kb(FRENCH)),
        (Language::Spanish, ten_kb(SPANISH)),
        (Language::Portuguese, ten_kb(PORTUGUESE)),
        (Language::German, ten_kb(GERMAN)),
        (Language::Dutch, ten_kb(DUTCH)),
        (Language::Italian, ten_kb(ITALIAN)),
    ];
    let bench_mode = std::env::args().any(|a| a == "--bench");
    if !bench_mode {
        for (language, text) in &texts {
            let out = normalize(text, *language);
            println!(
                "text_normalize smoke test: {language}, {} bytes -> {} bytes",
                text.len(),
                out.len()
            );
        }
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("text_normalize");
    g.sample_size(50).measurement_time(Duration::from_secs(5));
    for (language, text) in &texts {
        let normalizer = Normalizer::new(*language);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(language.name(), |b| {
            b.iter(|| normalizer.normalize(black_box(text)))
        });
    }
    g.finish();
    c.final_summary();
}
