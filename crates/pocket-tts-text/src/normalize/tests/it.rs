//! Italian cases. Conventions: Accademia della Crusca, consulenza linguistica
//! « Quarantaquattro gatti in fila per sei col resto di due, o di quando e come scrivere
//! i numeri in lettere » (numerals in one word, « duecentodiecimila », « trentatré »,
//! after L. Serianni, *Grammatica italiana*, VI); Treccani, *Enciclopedia dell'Italiano*,
//! « numerali [prontuario] » (elision before « uno » and « otto » in the tens,
//! « ventuno », « ventotto »; accent on compounds of « tre »; « mille »/« duemila »;
//! « un milione », « due milioni »; ordinals in « -esimo »; regnal numbers and centuries
//! as ordinals, « Luigi XIV », « XIX secolo »). Hundreds keep their vowel before « uno »
//! and « otto » (« centouno », « centootto ») but not before « ottanta »
//! (« centottanta »), as the Università di Messina's DICO (« La forma dei numerali
//! cardinali e ordinali ») and A. Gabrielli's *Si dice o non si dice?* (Hoepli) give it.
//! « un milione e uno » (DICO). Dates day first with
//! « primo » for the first of the month (« 1° maggio »), times « 15.30 » / « 15:30 »,
//! « € 19,99 », thousands with « . » and decimals with « , ».

use super::check_table;
use crate::normalize::Language;

pub(super) const TABLE: &[(&str, &str)] = &[
    // Cardinali.
    ("Ho 3 mele.", "Ho tre mele."),
    ("21 e 28", "ventuno e ventotto"),
    ("23 e 33", "ventitré e trentatré"),
    ("101, 108 e 180", "centouno, centootto e centottanta"),
    ("1.001 notti", "milleuno notti"),
    ("2.000 persone", "duemila persone"),
    ("1.000.000", "un milione"),
    ("3.200.000 abitanti", "tre milioni duecentomila abitanti"),
    ("2.000.000.000", "due miliardi"),
    ("1.000.000.000.000", "mille miliardi"),
    (
        "1.234.567",
        "un milione duecentotrentaquattromilacinquecentosessantasette",
    ),
    ("21.000 copie", "ventunomila copie"),
    ("5 mila euro", "cinquemila euro"),
    ("1 ora fa, 1 volta", "un'ora fa, una volta"),
    ("1 anno e 2 mesi", "un anno e due mesi"),
    ("il capitolo 1 della legge", "il capitolo uno della legge"),
    ("1 milione di persone", "un milione di persone"),
    ("3 milioni di dollari", "tre milioni di dollari"),
    // Decimali e segni.
    ("3,5", "tre virgola cinque"),
    (
        "3,14 e 0,05",
        "tre virgola quattordici e zero virgola zero cinque",
    ),
    ("-5 gradi", "meno cinque gradi"),
    ("+3", "più tre"),
    // Ordinali.
    ("il 5° piano", "il quinto piano"),
    ("la 2ª classe", "la seconda classe"),
    ("il 3º posto", "il terzo posto"),
    ("il 3º e il 4º", "il terzo e il quarto"),
    ("5ºC e 5º C", "cinque gradi Celsius e cinque gradi Celsius"),
    ("il 23° giorno", "il ventitreesimo giorno"),
    ("il 100° anniversario", "il centesimo anniversario"),
    // Date e anni.
    ("il 3 marzo 2026", "il tre marzo duemilaventisei"),
    ("il 03/04/2026", "il tre aprile duemilaventisei"),
    ("il 1° maggio", "il primo maggio"),
    ("il 1 maggio", "il primo maggio"),
    ("2026-03-04", "quattro marzo duemilaventisei"),
    ("nel 1999", "nel millenovecentonovantanove"),
    (
        "il 25 dic. 2025",
        "il venticinque dicembre duemilaventicinque",
    ),
    // Ore.
    ("alle 15:30", "alle quindici e trenta"),
    ("alle 15.30", "alle quindici e trenta"),
    ("alle 9.05", "alle nove e cinque"),
    ("alle 13:00", "alle tredici"),
    ("alle 3", "alle tre"),
    // Denaro.
    ("€ 19,99", "diciannove euro e novantanove centesimi"),
    ("19,99 €", "diciannove euro e novantanove centesimi"),
    ("1 € e 5 €", "un euro e cinque euro"),
    ("0,50 €", "cinquanta centesimi"),
    ("$ 5 e £ 12", "cinque dollari e dodici sterline"),
    ("1 £", "una sterlina"),
    ("2,5 milioni di euro", "due virgola cinque milioni di euro"),
    ("€ 2,5 milioni", "due virgola cinque milioni di euro"),
    ("1.000.000 €", "un milione di euro"),
    // Percentuali e unità.
    ("il 50% dei voti", "il cinquanta per cento dei voti"),
    ("1 km e 3 km", "un chilometro e tre chilometri"),
    ("1,5 km", "uno virgola cinque chilometri"),
    ("2 kg di farina", "due chilogrammi di farina"),
    ("250 g di burro", "duecentocinquanta grammi di burro"),
    ("1 t e 21 t", "una tonnellata e ventuno tonnellate"),
    ("1 h di viaggio", "un'ora di viaggio"),
    ("130 km/h", "centotrenta chilometri orari"),
    ("20 °C", "venti gradi Celsius"),
    ("5°C e 5° C", "cinque gradi Celsius e cinque gradi Celsius"),
    ("-3 °C", "meno tre gradi Celsius"),
    ("un angolo di 90°", "un angolo di novanta gradi"),
    // Telefoni.
    (
        "06 1234 5678",
        "zero sei, uno due tre quattro, cinque sei sette otto",
    ),
    (
        "333 123 4567",
        "tre tre tre, uno due tre, quattro cinque sei sette",
    ),
    // Abbreviazioni.
    ("il Sig. Rossi", "il signor Rossi"),
    ("la Sig.ra Bianchi", "la signora Bianchi"),
    ("il Dott. Verdi", "il dottor Verdi"),
    ("la Dott.ssa Neri", "la dottoressa Neri"),
    ("il prof. Esposito", "il professor Esposito"),
    ("mele, pere, ecc.", "mele, pere, eccetera."),
    ("mele, pere ecc. e uva", "mele, pere eccetera e uva"),
    ("p. es. questo", "per esempio questo"),
    ("ad es. questo", "ad esempio questo"),
    ("a pag. 12", "a pagina dodici"),
    ("il n. 5", "il numero cinque"),
    (
        "Tel. 06 1234 5678",
        "telefono zero sei, uno due tre quattro, cinque sei sette otto",
    ),
    (
        "nel 44 a.C. circa",
        "nel quarantaquattro avanti Cristo circa",
    ),
    // Numeri romani.
    ("Papa Giovanni XXIII", "Papa Giovanni ventitreesimo"),
    ("Luigi XIV", "Luigi quattordicesimo"),
    ("Giovanni Paolo II", "Giovanni Paolo secondo"),
    ("Vittorio Emanuele II", "Vittorio Emanuele secondo"),
    ("Elisabetta II", "Elisabetta seconda"),
    ("Francesco I.", "Francesco primo."),
    ("capitolo IV", "capitolo quarto"),
    ("cap. IV", "capitolo quarto"),
    ("parte II", "parte seconda"),
    ("il XIX secolo", "il diciannovesimo secolo"),
    ("nel V secolo a.C.", "nel quinto secolo avanti Cristo."),
    ("la II guerra mondiale", "la seconda guerra mondiale"),
    // Frazioni.
    ("1/2, 3/4 e 2/3", "un mezzo, tre quarti e due terzi"),
    ("1/3 e 5/8", "un terzo e cinque ottavi"),
    ("2 ½", "due e mezzo"),
    ("1 1/4", "uno e un quarto"),
    // Simboli, indirizzi, versioni.
    ("Rossi & Figli", "Rossi e Figli"),
    ("2+2=4", "due più due uguale quattro"),
    ("www.esempio.it", "www punto esempio punto it"),
    (
        "mario.rossi@esempio.it",
        "mario punto rossi chiocciola esempio punto it",
    ),
    ("v2.1", "versione due punto uno"),
    (
        "la versione 3.11.2",
        "la versione tre punto undici punto due",
    ),
    ("la versione 2.10", "la versione due punto dieci"),
    ("Versione 2.0", "Versione due punto zero"),
    (
        "la release 3.12 esce alle 15.30",
        "la release tre punto dodici esce alle quindici e trenta",
    ),
    (
        "Benedetto XVI e Leone XIV",
        "Benedetto sedicesimo e Leone quattordicesimo",
    ),
    ("nn. 3 e 4", "numeri tre e quattro"),
    ("il #1", "il numero uno"),
    // Casi limite.
    ("-12,5", "meno dodici virgola cinque"),
    ("1.000.001", "un milione e uno"),
    (
        "999.999.999",
        "novecentonovantanove milioni novecentonovantanovemilanovecentonovantanove",
    ),
    ("1/10 e 7/100", "un decimo e sette centesimi"),
    ("il 1° Maggio", "il primo maggio"),
    ("alle 3 pm", "alle tre del pomeriggio"),
    ("C#", "C diesis"),
    ("l'anno 2000", "l'anno duemila"),
    ("0,001", "zero virgola zero zero uno"),
    ("9/10 e 2/5", "nove decimi e due quinti"),
    ("⅓ di tazza", "un terzo di tazza"),
    (
        "USD 100 e CHF 50",
        "cento dollari e cinquanta franchi svizzeri",
    ),
    ("-€ 5", "meno cinque euro"),
    ("€ 1,5 mld", "uno virgola cinque miliardi di euro"),
    ("il 29/02/2024", "il ventinove febbraio duemilaventiquattro"),
    ("20.000 m²", "ventimila metri quadrati"),
    ("50 mq", "cinquanta metri quadrati"),
    (
        "192.168.0.1",
        "centonovantadue punto centosessantotto punto zero punto uno",
    ),
    ("#vacanze", "hashtag vacanze"),
    ("Es. questo", "esempio questo"),
    ("Pio IX e Carlo V", "Pio nono e Carlo quinto"),
    ("atto III, scena II", "atto terzo, scena seconda"),
    (
        "il I secolo d.C. circa",
        "il primo secolo dopo Cristo circa",
    ),
    ("I ragazzi", "I ragazzi"),
    ("CAP 00100", "CAP zero zero uno zero zero"),
    // Lasciato com'è.
    ("Ciao a tutti!", "Ciao a tutti!"),
];

#[test]
fn italian_table() {
    assert!(TABLE.len() >= 40);
    check_table(Language::Italian, TABLE);
}
