//! French cases. Conventions: Office québécois de la langue française, Banque de
//! dépannage linguistique, articles « Écriture des nombres » (espaces entre les tranches
//! de trois chiffres, virgule décimale, « vingt et un », « quatre-vingts »), « Heure »
//! (« 15 h 30 »), « Date » (« le 1er mars 2026 », jour/mois/année), « Symboles des unités
//! monétaires » (« 19,99 $ », « 5 € ») et « Abréviations » (« M. », « Mme », « Dr »,
//! « etc. »); Lexique des règles typographiques en usage à l'Imprimerie nationale
//! (ordinaux « 1er », « 1re », « 2e », siècles « XIXe », souverains « Louis XIV »).

use super::check_table;
use crate::normalize::Language;

pub(super) const TABLE: &[(&str, &str)] = &[
    // Cardinaux, décimaux, signes.
    ("J'ai 3 pommes.", "J'ai trois pommes."),
    (
        "1 234 567 habitants",
        "un million deux cent trente-quatre mille cinq cent soixante-sept habitants",
    ),
    ("1\u{a0}000 personnes", "mille personnes"),
    ("21 ans", "vingt et un ans"),
    (
        "71, 80, 81 et 91",
        "soixante et onze, quatre-vingts, quatre-vingt-un et quatre-vingt-onze",
    ),
    ("200 et 201", "deux cents et deux cent un"),
    (
        "80 000 et 200 000 000",
        "quatre-vingt mille et deux cents millions",
    ),
    ("1 000 000 000", "un milliard"),
    ("3,14", "trois virgule quatorze"),
    (
        "0,5 et 3,05",
        "zéro virgule cinq et trois virgule zéro cinq",
    ),
    ("-5 °C", "moins cinq degrés Celsius"),
    // Ordinaux.
    ("le 1er et la 1re", "le premier et la première"),
    ("le 2e jour", "le deuxième jour"),
    ("la 21e place", "la vingt et unième place"),
    ("le 80e anniversaire", "le quatre-vingtième anniversaire"),
    ("au XIXe siècle", "au dix-neuvième siècle"),
    ("la 2nde guerre", "la seconde guerre"),
    ("les 1ers et les 3es", "les premiers et les troisièmes"),
    // Dates et années.
    ("le 3 mars 2026", "le trois mars deux mille vingt-six"),
    ("le 1er janvier 2000", "le premier janvier deux mille"),
    ("le 03/04/2026", "le trois avril deux mille vingt-six"),
    ("2026-03-04", "quatre mars deux mille vingt-six"),
    ("en 1999", "en mille neuf cent quatre-vingt-dix-neuf"),
    (
        "le 14 juillet 1789",
        "le quatorze juillet mille sept cent quatre-vingt-neuf",
    ),
    // Heures.
    ("à 15 h 30", "à quinze heures trente"),
    ("à 15h30", "à quinze heures trente"),
    ("à 15:30", "à quinze heures trente"),
    ("à 1 h 05", "à une heure cinq"),
    ("à 21 h", "à vingt et une heures"),
    ("à 0 h 30", "à zéro heure trente"),
    ("en 3 h 20 min", "en trois heures vingt"),
    // Monnaie.
    ("19,99 $", "dix-neuf dollars et quatre-vingt-dix-neuf cents"),
    ("5 € et 1 €", "cinq euros et un euro"),
    ("0,50 €", "cinquante centimes"),
    ("2,5 M€", "deux virgule cinq millions d'euros"),
    ("1 000 000 €", "un million d'euros"),
    ("12 £ ou 1 £", "douze livres sterling ou une livre sterling"),
    ("3 millions de dollars", "trois millions de dollars"),
    // Pourcentages et unités.
    ("50 % de remise", "cinquante pour cent de remise"),
    (
        "3 km et 1,5 km",
        "trois kilomètres et un virgule cinq kilomètre",
    ),
    ("250 g de beurre", "deux cent cinquante grammes de beurre"),
    ("21 t de sable", "vingt et une tonnes de sable"),
    ("130 km/h", "cent trente kilomètres à l'heure"),
    // Téléphones.
    (
        "06 12 34 56 78",
        "zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit",
    ),
    (
        "+33 1 23 45 67 89",
        "plus trente-trois, un, vingt-trois, quarante-cinq, soixante-sept, quatre-vingt-neuf",
    ),
    // Abréviations.
    (
        "M. Dupont et Mme Martin",
        "Monsieur Dupont et Madame Martin",
    ),
    ("Mlle Durand", "Mademoiselle Durand"),
    ("le Dr Martin", "le Docteur Martin"),
    ("Me Leblanc", "Maître Leblanc"),
    (
        "des pommes, des poires, etc.",
        "des pommes, des poires, et cetera.",
    ),
    ("p. ex. ceci", "par exemple ceci"),
    ("n° 5 et no 6", "numéro cinq et numéro six"),
    ("en 52 av. J.-C.", "en cinquante-deux avant Jésus-Christ."),
    (
        "en 52 av. J.-C. environ",
        "en cinquante-deux avant Jésus-Christ environ",
    ),
    ("St-Denis", "Saint-Denis"),
    // Fractions.
    (
        "1/2, 3/4, 2/3 et 5/8",
        "un demi, trois quarts, deux tiers et cinq huitièmes",
    ),
    ("2 1/2 tasses", "deux et demi tasses"),
    // Chiffres romains.
    ("Louis XIV", "Louis quatorze"),
    ("François Ier", "François premier"),
    ("chapitre IV", "chapitre quatre"),
    ("Élisabeth II", "Élisabeth deux"),
    // Symboles, adresses, versions.
    ("R&D", "R et D"),
    ("2+2=4", "deux plus deux égal quatre"),
    ("www.exemple.fr", "www point exemple point fr"),
    (
        "jean.dupont@exemple.fr",
        "jean point dupont arobase exemple point fr",
    ),
    ("v2.1", "version deux point un"),
    ("Python 3.11", "Python trois point onze"),
    // Intervalles.
    ("10-20 personnes", "dix à vingt personnes"),
    // Laissé tel quel.
    ("Bonjour !", "Bonjour !"),
];

#[test]
fn french_table() {
    assert!(TABLE.len() >= 40);
    check_table(Language::French, TABLE);
}
