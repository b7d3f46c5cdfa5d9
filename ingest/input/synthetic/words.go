package synthetic

// Word lists the generator draws names from. All of them are invented for
// pds: surnames and places are common ones, company names built from them
// are fictitious.

// legalForm is a company's legal form as usually written, with the other
// spellings of the same form seen in product data.
type legalForm struct {
	canon    string
	variants []string
}

// country is where a manufacturer is based: its name stock, legal forms and
// the GS1 prefixes its identifiers come from.
type country struct {
	code   string // ISO 3166-1 alpha-2
	weight int    // share of manufacturers, relative
	lang   string // language of product names
	upc    bool   // GTIN-12 (UPC) country
	// GTIN-13: three-digit prefixes whose company prefixes are 7 digits
	// (large companies, 100,000 items each) and 9 digits (1,000 items).
	// For UPC countries the entries are two-digit UPC leads: 6-digit
	// company prefixes (large) and 8-digit ones (small).
	big, small []string
	gtin8      []string // three-digit GTIN-8 prefixes (4-digit item numbers)
	forms      []legalForm
	surnames   []string
	places     []string
	// trades are words that name a company before the family name
	// ("Brauerei Hofmann"), each for one industry.
	trades []trade
}

type trade struct {
	word     string
	industry int // index into industries
}

// industry is what a manufacturer makes.
type industry struct {
	word     string // as in a company name: "Foods", "Pharma"
	category int    // product category
}

// Product categories.
const (
	catFood = iota
	catBeverage
	catHealth
	catCosmetics
	catHousehold
	catTextile
	catElectronics
	catHardgoods
	numCategories
)

var industries = []industry{
	{"Foods", catFood}, {"Food Group", catFood}, {"Dairy", catFood}, {"Dairies", catFood},
	{"Bakery", catFood}, {"Bakeries", catFood}, {"Confectionery", catFood}, {"Snacks", catFood},
	{"Seafood", catFood}, {"Nutrition", catFood}, {"Organics", catFood}, {"Coffee", catBeverage},
	{"Tea", catBeverage}, {"Mills", catFood}, {"Farms", catFood}, {"Provisions", catFood},
	{"Beverages", catBeverage}, {"Brewing", catBeverage}, {"Breweries", catBeverage}, {"Spirits", catBeverage},
	{"Distillery", catBeverage}, {"Water", catBeverage}, {"Juices", catBeverage},
	{"Pharma", catHealth}, {"Pharmaceuticals", catHealth}, {"Healthcare", catHealth}, {"Medical", catHealth},
	{"Life Sciences", catHealth}, {"Laboratories", catHealth},
	{"Cosmetics", catCosmetics}, {"Personal Care", catCosmetics}, {"Beauty", catCosmetics},
	{"Household", catHousehold}, {"Chemicals", catHousehold}, {"Paper", catHousehold}, {"Packaging", catHousehold},
	{"Pet Care", catHousehold}, {"Home Care", catHousehold},
	{"Textiles", catTextile}, {"Apparel", catTextile}, {"Sportswear", catTextile}, {"Knitwear", catTextile},
	{"Footwear", catTextile},
	{"Electronics", catElectronics}, {"Optics", catElectronics}, {"Appliances", catElectronics},
	{"Audio", catElectronics}, {"Lighting", catElectronics}, {"Instruments", catElectronics},
	{"Tools", catHardgoods}, {"Toys", catHardgoods}, {"Furniture", catHardgoods}, {"Hardware", catHardgoods},
	{"Garden", catHardgoods}, {"Outdoor", catHardgoods}, {"Housewares", catHardgoods},
}

// qualifiers make a sister company's name from another's: "Alpine Dairy"
// and "Alpine Dairy International".
var qualifiers = []string{"International", "Group", "Holding", "Trading", "Europe", "Nord", "Süd",
	"Industries", "Brands", "Products", "Manufacturing", "Worldwide", "Solutions", "Partners"}

// genericPlaces are English place-like words any country's companies use.
var genericPlaces = []string{"Northern", "Pacific", "Atlantic", "Golden Valley", "Silver Lake", "Blue Ridge",
	"Green Meadow", "Riverside", "Lakeside", "Summit", "Redwood", "Prairie", "Harbor", "Coastal", "Highland",
	"Evergreen", "Sunrise", "Alpine", "Nordic", "Continental", "Royal", "Crown", "Pioneer", "Heritage",
	"Meadowbrook", "Oakwood", "Stonebridge", "Westfield", "Eastgate", "Clearwater"}

var (
	formsDE = []legalForm{
		{"GmbH", []string{"Gmbh", "G.m.b.H.", "GMBH"}},
		{"AG", []string{"Aktiengesellschaft", "A.G."}},
		{"KG", []string{"K.G.", "Kommanditgesellschaft"}},
		{"GmbH & Co. KG", []string{"GmbH & Co KG", "GmbH und Co. KG", "GmbH&Co.KG"}},
	}
	formsUK = []legalForm{
		{"Ltd", []string{"Limited", "Ltd.", "LTD"}},
		{"Limited", []string{"Ltd", "Ltd."}},
		{"PLC", []string{"plc", "Public Limited Company", "P.L.C."}},
		{"LLP", []string{"L.L.P."}},
	}
	formsUS = []legalForm{
		{"Inc.", []string{"Inc", "Incorporated", "INC"}},
		{"Corp", []string{"Corp.", "Corporation"}},
		{"Corporation", []string{"Corp", "Corp."}},
		{"LLC", []string{"L.L.C.", "Llc"}},
		{"Co.", []string{"Company", "Co"}},
	}
	formsFR = []legalForm{
		{"S.A.", []string{"SA", "S.A"}},
		{"SAS", []string{"S.A.S.", "Sas"}},
		{"SARL", []string{"S.A.R.L.", "Sàrl"}},
	}
	formsIT = []legalForm{
		{"S.p.A.", []string{"SpA", "S.P.A.", "Spa"}},
		{"S.r.l.", []string{"Srl", "S.R.L.", "s.r.l"}},
	}
	formsES = []legalForm{
		{"S.A.", []string{"SA", "Sociedad Anónima"}},
		{"S.L.", []string{"SL", "Sociedad Limitada"}},
	}
	formsNL = []legalForm{
		{"B.V.", []string{"BV", "B.V", "bv"}},
		{"N.V.", []string{"NV", "N.V"}},
	}
	formsBE = []legalForm{
		{"N.V.", []string{"NV"}},
		{"S.A.", []string{"SA", "S.A./N.V."}},
		{"B.V.", []string{"BV", "BVBA"}},
	}
	formsCH = []legalForm{
		{"AG", []string{"A.G.", "Aktiengesellschaft"}},
		{"SA", []string{"S.A."}},
		{"GmbH", []string{"Gmbh", "G.m.b.H."}},
	}
	formsAT = []legalForm{
		{"GmbH", []string{"Gmbh", "Ges.m.b.H."}},
		{"AG", []string{"Aktiengesellschaft"}},
	}
	formsSE = []legalForm{{"AB", []string{"Aktiebolag", "AB (publ)", "Ab"}}}
	formsFI = []legalForm{{"Oy", []string{"OY", "Osakeyhtiö"}}, {"Oyj", []string{"OYJ", "Oy"}}}
	formsDK = []legalForm{{"A/S", []string{"AS", "Aktieselskab"}}, {"ApS", []string{"Aps", "APS"}}}
	formsNO = []legalForm{{"AS", []string{"A/S", "A.S."}}, {"ASA", []string{"AS"}}}
	formsPL = []legalForm{
		{"Sp. z o.o.", []string{"sp. z o.o.", "Sp.z o.o.", "Spółka z o.o."}},
		{"S.A.", []string{"SA", "Spółka Akcyjna"}},
	}
	formsAsia = []legalForm{
		{"Co., Ltd.", []string{"Co. Ltd.", "Co.,Ltd", "Company Limited", "CO., LTD."}},
		{"Corporation", []string{"Corp.", "Corp"}},
	}
	formsJP = []legalForm{
		{"Co., Ltd.", []string{"Co. Ltd.", "Co.,Ltd.", "Company Limited", "K.K."}},
		{"K.K.", []string{"KK", "Kabushiki Kaisha"}},
		{"Corporation", []string{"Corp.", "Corp"}},
	}
	formsIN = []legalForm{{"Pvt. Ltd.", []string{"Private Limited", "Pvt Ltd", "Pvt. Limited"}}, {"Ltd", []string{"Limited"}}}
	formsAU = []legalForm{{"Pty Ltd", []string{"Pty. Ltd.", "Proprietary Limited", "PTY LTD"}}}
	formsBR = []legalForm{{"Ltda.", []string{"Ltda", "Limitada", "LTDA"}}, {"S.A.", []string{"SA", "S/A"}}}
	formsCA = []legalForm{{"Inc.", []string{"Inc", "Incorporated"}}, {"Ltd.", []string{"Limited", "Ltée"}}}
)

func span(lo, hi int) []string {
	var out []string
	for p := lo; p <= hi; p++ {
		out = append(out, itoa3(p))
	}
	return out
}

func itoa3(p int) string {
	return string([]byte{byte('0' + p/100), byte('0' + p/10%10), byte('0' + p%10)})
}

func cat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// ind returns the index of the industry named word, for the trades and
// predicate tables to name industries by word.
func ind(word string) int {
	for i, in := range industries {
		if in.word == word {
			return i
		}
	}
	panic("synthetic: no industry " + word)
}

var countries = []country{
	{
		code: "DE", weight: 17, lang: "de",
		big: span(400, 409), small: span(410, 440), gtin8: span(400, 440), forms: formsDE,
		surnames: []string{"Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker",
			"Schulz", "Hoffmann", "Schäfer", "Koch", "Bauer", "Richter", "Klein", "Wolf", "Schröder", "Neumann",
			"Schwarz", "Zimmermann", "Braun", "Krüger", "Hofmann", "Hartmann", "Lange", "Schmitt", "Werner",
			"Krause", "Meier", "Lehmann", "Köhler", "Vogel", "Jäger", "Groß", "Böhm", "Weiß", "Kühn", "Lindner"},
		places: []string{"Bavaria", "Schwarzwald", "Rhön", "Allgäu", "Eifel", "Harz", "Spreewald", "Lüneburg",
			"Sauerland", "Rheinland", "Westfalen", "Holstein", "Franken", "Bodensee", "Ostsee", "Nordsee",
			"Münsterland", "Erzgebirge", "Odenwald", "Taunus"},
		trades: []trade{{"Brauerei", ind("Brewing")}, {"Molkerei", ind("Dairy")}, {"Bäckerei", ind("Bakery")},
			{"Feinkost", ind("Foods")}, {"Mühle", ind("Mills")}, {"Arzneimittelwerk", ind("Pharma")},
			{"Textilwerke", ind("Textiles")}, {"Werkzeugbau", ind("Tools")}},
	},
	{
		code: "FR", weight: 11, lang: "fr",
		big: span(300, 309), small: span(310, 379), gtin8: span(300, 379), forms: formsFR,
		surnames: []string{"Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand",
			"Leroy", "Moreau", "Simon", "Laurent", "Lefèvre", "Michel", "Garcia", "Fournier", "Lambert",
			"Girard", "Bonnet", "Mercier", "Rousseau", "Blanc", "Guérin", "Faure", "André", "Chevalier",
			"François", "Gauthier", "Bérenger", "Méndès"},
		places: []string{"Bretagne", "Provence", "Normandie", "Jura", "Auvergne", "Savoie", "Alsace",
			"Bourgogne", "Champagne", "Périgord", "Vendée", "Ardèche", "Cévennes", "Lorraine", "Picardie"},
		trades: []trade{{"Laiterie", ind("Dairy")}, {"Fromagerie", ind("Dairy")}, {"Biscuiterie", ind("Bakery")},
			{"Chocolaterie", ind("Confectionery")}, {"Brasserie", ind("Brewing")}, {"Distillerie", ind("Distillery")},
			{"Laboratoires", ind("Laboratories")}, {"Société Alimentaire", ind("Foods")},
			{"Société Textile", ind("Textiles")}, {"Société Pharmaceutique", ind("Pharma")},
			{"Parfumerie", ind("Cosmetics")}, {"Maison", ind("Foods")}},
	},
	{
		code: "GB", weight: 11, lang: "en",
		big: span(500, 501), small: span(502, 509), gtin8: span(500, 509), forms: formsUK,
		surnames: []string{"Smith", "Jones", "Taylor", "Brown", "Williams", "Wilson", "Johnson", "Davies",
			"Robinson", "Wright", "Thompson", "Evans", "Walker", "White", "Roberts", "Green", "Hall", "Wood",
			"Jackson", "Clarke", "Harrison", "Cooper", "Ward", "Morgan", "Hughes", "Fletcher", "Baxter",
			"Whitfield", "Pemberton", "O'Neill", "McAllister"},
		places: []string{"Yorkshire", "Cornwall", "Devon", "Kent", "Cotswold", "Highland", "Lakeland",
			"Somerset", "Norfolk", "Suffolk", "Cheshire", "Lancashire", "Northumbria", "Pennine", "Thames",
			"Severn", "Tweed", "Dorset"},
	},
	{
		code: "US", weight: 15, lang: "en", upc: true,
		big: []string{"03", "04", "07", "08"},
		small: []string{"06", "09", "11", "12", "13", "14", "16", "17", "18", "19", "60", "61", "62", "63",
			"64", "65", "66", "67", "68", "69", "70", "71", "72", "73", "74", "75", "76", "77", "78", "79",
			"80", "81", "82", "83", "84", "85", "86", "87", "88", "89"},
		forms: formsUS,
		surnames: []string{"Miller", "Davis", "Anderson", "Moore", "Martinez", "Hernandez", "Lopez", "Gonzalez",
			"Clark", "Lewis", "Lee", "Young", "Allen", "King", "Scott", "Adams", "Baker", "Nelson", "Carter",
			"Mitchell", "Perez", "Campbell", "Parker", "Collins", "Stewart", "Sanchez", "Morris", "Rogers",
			"Reed", "Cook", "Bailey", "Kowalski", "Nguyen", "O'Brien"},
		places: []string{"Texas", "Carolina", "Dakota", "Ozark", "Appalachian", "Sierra", "Cascade",
			"Great Lakes", "Mississippi", "Hudson", "Chesapeake", "Rocky Mountain", "Sonoma", "Napa",
			"Vermont", "Maine", "Georgia", "Hill Country", "Bay Area", "Midwest"},
	},
	{
		code: "CA", weight: 2, lang: "en", upc: true,
		big: []string{"05"}, small: []string{"62", "67", "77", "86"},
		forms:    formsCA,
		surnames: []string{"Tremblay", "Gagnon", "Roy", "Côté", "Bouchard", "Gauthier", "Morin", "Lavoie", "Fortin", "Gagné", "MacDonald", "Campbell"},
		places:   []string{"Laurentian", "Maritime", "Québec", "Ontario", "Prairie", "Yukon", "Okanagan", "Niagara"},
	},
	{
		code: "IT", weight: 8, lang: "it",
		big: span(800, 803), small: span(804, 839), gtin8: span(800, 839), forms: formsIT,
		surnames: []string{"Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo", "Ricci",
			"Marino", "Greco", "Bruno", "Gallo", "Conti", "De Luca", "Mancini", "Costa", "Giordano", "Rizzo",
			"Lombardi", "Moretti", "Barbieri", "Fontana", "Santoro", "Mariani", "Rinaldi", "Caruso", "Niccolò"},
		places: []string{"Toscana", "Piemonte", "Emilia", "Veneto", "Puglia", "Sicilia", "Sardegna", "Umbria",
			"Lombardia", "Liguria", "Marche", "Abruzzo", "Calabria", "Trentino", "Valtellina"},
		trades: []trade{{"Pastificio", ind("Foods")}, {"Caseificio", ind("Dairy")}, {"Oleificio", ind("Foods")},
			{"Birrificio", ind("Brewing")}, {"Distilleria", ind("Distillery")}, {"Laboratorio Farmaceutico", ind("Pharma")},
			{"Lanificio", ind("Textiles")}, {"Torrefazione", ind("Coffee")}},
	},
	{
		code: "ES", weight: 4, lang: "es",
		big: []string{"840"}, small: span(841, 849), gtin8: span(840, 849), forms: formsES,
		surnames: []string{"García", "Fernández", "González", "Rodríguez", "López", "Martínez", "Sánchez",
			"Pérez", "Gómez", "Martín", "Jiménez", "Ruiz", "Hernández", "Díaz", "Moreno", "Muñoz", "Álvarez",
			"Romero", "Navarro", "Peña", "Núñez", "Ibáñez"},
		places: []string{"Andalucía", "Galicia", "Rioja", "Navarra", "Castilla", "Aragón", "Murcia", "Asturias",
			"Valencia", "Cantabria", "Extremadura", "Mallorca"},
		trades: []trade{{"Bodegas", ind("Spirits")}, {"Conservas", ind("Seafood")}, {"Embutidos", ind("Foods")},
			{"Laboratorios", ind("Laboratories")}, {"Industrias", ind("Household")}},
	},
	{
		code: "NL", weight: 4, lang: "nl",
		big: []string{"870"}, small: span(871, 879), gtin8: span(870, 879), forms: formsNL,
		surnames: []string{"de Jong", "Jansen", "de Vries", "van den Berg", "van Dijk", "Bakker", "Janssen",
			"Visser", "Smit", "Meijer", "de Boer", "Mulder", "de Groot", "Bos", "Vos", "Peters", "Hendriks",
			"van Leeuwen", "Dekker", "Brouwer", "IJsselstein"},
		places: []string{"Zeeland", "Friesland", "Brabant", "Limburg", "Drenthe", "Gelderland", "Veluwe",
			"Holland", "Texel", "Utrecht"},
		trades: []trade{{"Zuivelfabriek", ind("Dairy")}, {"Bakkerij", ind("Bakery")}, {"Brouwerij", ind("Brewing")}},
	},
	{
		code: "BE", weight: 2, lang: "nl",
		big: []string{"540"}, small: span(541, 549), gtin8: span(540, 549), forms: formsBE,
		surnames: []string{"Peeters", "Maes", "Jacobs", "Mertens", "Willems", "Claes", "Goossens", "Wouters",
			"De Smet", "Dubois", "Lambert", "Dupont", "Vanhoutte", "Vandenbroucke", "Lemaître"},
		places: []string{"Flandria", "Wallonia", "Ardennes", "Kempen", "Brabant", "Meuse", "Escaut", "Liège"},
		trades: []trade{{"Chocolaterie", ind("Confectionery")}, {"Brouwerij", ind("Brewing")}, {"Biscuiterie", ind("Bakery")}},
	},
	{
		code: "CH", weight: 3, lang: "de",
		big: []string{"760"}, small: span(761, 769), gtin8: span(760, 769), forms: formsCH,
		surnames: []string{"Müller", "Meier", "Schmid", "Keller", "Weber", "Huber", "Schneider", "Meyer",
			"Steiner", "Fischer", "Gerber", "Brunner", "Baumann", "Frei", "Zürcher", "Moser", "Widmer", "Favre",
			"Rochat", "Gäumann"},
		places: []string{"Alpina", "Helvetia", "Engadin", "Valais", "Ticino", "Emmental", "Gruyère", "Jura",
			"Appenzell", "Zug", "Lémanique", "Bernina"},
		trades: []trade{{"Käserei", ind("Dairy")}, {"Confiserie", ind("Confectionery")}, {"Uhrenfabrik", ind("Instruments")}},
	},
	{
		code: "AT", weight: 2, lang: "de",
		big: []string{"900"}, small: span(901, 919), gtin8: span(900, 919), forms: formsAT,
		surnames: []string{"Gruber", "Huber", "Bauer", "Wagner", "Pichler", "Steiner", "Moser", "Mayer",
			"Hofer", "Leitner", "Berger", "Fuchs", "Eder", "Fischer", "Schmid", "Winkler", "Weiß", "Pölzl"},
		places: []string{"Tirol", "Steiermark", "Kärnten", "Wachau", "Salzkammergut", "Vorarlberg", "Waldviertel", "Mühlviertel"},
		trades: []trade{{"Brauerei", ind("Brewing")}, {"Molkerei", ind("Dairy")}, {"Konditorei", ind("Confectionery")}},
	},
	{
		code: "SE", weight: 2, lang: "sv",
		big: []string{"730"}, small: span(731, 739), gtin8: span(730, 739), forms: formsSE,
		surnames: []string{"Andersson", "Johansson", "Karlsson", "Nilsson", "Eriksson", "Larsson", "Olsson",
			"Persson", "Svensson", "Gustafsson", "Lindqvist", "Åkerlund", "Ängström", "Öberg", "Sjögren",
			"Lundgren", "Bergström", "Söderberg", "Ångström"},
		places: []string{"Norrland", "Småland", "Skåne", "Dalarna", "Gotland", "Värmland", "Jämtland",
			"Halland", "Öland", "Västerbotten"},
		trades: []trade{{"Bryggeri", ind("Brewing")}, {"Mejeri", ind("Dairy")}, {"Livsmedel", ind("Foods")}},
	},
	{
		code: "FI", weight: 1, lang: "fi",
		big: []string{"640"}, small: span(641, 649), gtin8: span(640, 649), forms: formsFI,
		surnames: []string{"Korhonen", "Virtanen", "Mäkinen", "Nieminen", "Mäkelä", "Hämäläinen", "Laine",
			"Heikkinen", "Koskinen", "Järvinen", "Lehtonen", "Saarinen"},
		places: []string{"Lappi", "Karjala", "Savo", "Häme", "Pohjanmaa", "Kainuu", "Saimaa", "Ahvenanmaa"},
	},
	{
		code: "DK", weight: 1, lang: "da",
		big: []string{"570"}, small: span(571, 579), gtin8: span(570, 579), forms: formsDK,
		surnames: []string{"Jensen", "Nielsen", "Hansen", "Pedersen", "Andersen", "Christensen", "Larsen",
			"Sørensen", "Rasmussen", "Jørgensen", "Møller", "Kjær", "Østergaard"},
		places: []string{"Jylland", "Fyn", "Sjælland", "Bornholm", "Himmerland", "Vendsyssel", "Østerby", "Limfjord"},
	},
	{
		code: "NO", weight: 1, lang: "no",
		big: []string{"700"}, small: span(701, 709), gtin8: span(700, 709), forms: formsNO,
		surnames: []string{"Hansen", "Johansen", "Olsen", "Larsen", "Andersen", "Berg", "Haugen", "Hagen",
			"Bakken", "Løvholm", "Solberg", "Strand", "Dahl", "Lie"},
		places: []string{"Nordlys", "Fjordland", "Vestland", "Trøndelag", "Hardanger", "Lofoten", "Telemark", "Finnmark"},
	},
	{
		code: "PL", weight: 2, lang: "pl",
		small: []string{"590"}, gtin8: []string{"590"}, forms: formsPL,
		surnames: []string{"Nowak", "Kowalski", "Wiśniewski", "Wójcik", "Kowalczyk", "Kamiński", "Lewandowski",
			"Zieliński", "Szymański", "Woźniak", "Dąbrowski", "Kozłowski"},
		places: []string{"Mazury", "Podhale", "Kaszuby", "Śląsk", "Pomorze", "Wielkopolska", "Łódź", "Podlasie"},
	},
	{
		code: "JP", weight: 4, lang: "en",
		big: []string{"450", "451", "490"}, small: cat(span(452, 459), span(491, 499)), forms: formsJP,
		surnames: []string{"Tanaka", "Suzuki", "Takahashi", "Watanabe", "Itō", "Yamamoto", "Nakamura",
			"Kobayashi", "Katō", "Yoshida", "Yamada", "Sasaki", "Matsumoto", "Inoue", "Kimura", "Hayashi"},
		places: []string{"Nippon", "Hokkaido", "Kyushu", "Shikoku", "Tohoku", "Kansai", "Sakura", "Fuji",
			"Chūbu", "Okinawa", "Setouchi"},
	},
	{
		code: "CN", weight: 4, lang: "en",
		big: []string{"690", "691"}, small: span(692, 699), forms: formsAsia,
		surnames: []string{"Huaxin", "Jinlong", "Hengtai", "Xinda", "Ruifeng", "Tianli", "Zhongyuan", "Haitong",
			"Dongfang", "Meida", "Kangda", "Yongsheng", "Baoli", "Hongxing"},
		places: []string{"Shenzhen", "Ningbo", "Guangzhou", "Xiamen", "Hangzhou", "Suzhou", "Qingdao",
			"Dongguan", "Foshan", "Yiwu", "Tianjin", "Chengdu"},
	},
	{
		code: "KR", weight: 1, lang: "en",
		small: []string{"880"}, forms: formsAsia,
		surnames: []string{"Hanil", "Daesung", "Samjin", "Dongwon", "Seoul", "Haesung", "Jinro", "Kumho", "Shinwon"},
		places:   []string{"Busan", "Incheon", "Daegu", "Gwangju", "Ulsan", "Jeju"},
	},
	{
		code: "TW", weight: 1, lang: "en",
		small: []string{"471"}, forms: formsAsia,
		surnames: []string{"Chang", "Lin", "Chen", "Huang", "Wang", "Wu", "Liu", "Tsai", "Yang", "Hsu"},
		places:   []string{"Taipei", "Taichung", "Hsinchu", "Kaohsiung", "Tainan", "Formosa"},
	},
	{
		code: "IN", weight: 1, lang: "en",
		small: []string{"890"}, forms: formsIN,
		surnames: []string{"Sharma", "Patel", "Gupta", "Reddy", "Iyer", "Mehta", "Agarwal", "Nair", "Kapoor", "Joshi", "Desai"},
		places:   []string{"Bharat", "Ganges", "Deccan", "Kerala", "Punjab", "Gujarat", "Himalaya", "Konkan"},
	},
	{
		code: "AU", weight: 1, lang: "en",
		big: []string{"930"}, small: span(931, 939), forms: formsAU,
		surnames: []string{"Smith", "Jones", "Williams", "Brown", "Wilson", "Taylor", "Nguyen", "Kelly", "Ryan", "Murphy"},
		places:   []string{"Outback", "Murray", "Tasman", "Kimberley", "Barossa", "Hunter Valley", "Coral Coast", "Gippsland"},
	},
	{
		code: "BR", weight: 1, lang: "pt",
		small: []string{"789", "790"}, forms: formsBR,
		surnames: []string{"Silva", "Santos", "Oliveira", "Souza", "Rodrigues", "Ferreira", "Alves", "Pereira",
			"Lima", "Gonçalves", "Araújo", "Ribeiro"},
		places: []string{"Amazônia", "Paulista", "Bahia", "Minas", "Pampa", "Serra Gaúcha", "Cerrado", "Pantanal"},
	},
}

// Syllables for invented words (brand names and coined company names).
var (
	onsets = []string{"b", "br", "c", "cr", "d", "f", "fl", "g", "gr", "h", "k", "l", "m", "n", "p", "pr",
		"r", "s", "st", "t", "tr", "v", "z", "n", "l", "m"}
	vowels       = []string{"a", "e", "i", "o", "u", "a", "e", "o", "ia", "ea", "au"}
	accentVowels = []string{"é", "è", "ö", "ü", "å", "ä", "ø", "á", "ó", "í", "ô"}
	codas        = []string{"", "", "", "n", "r", "l", "s", "x", "m", "nd", "rt", "st", "v"}
	// simpleOnsets follow a coda inside a word, so that clusters stay short.
	simpleOnsets = []string{"b", "d", "l", "m", "n", "r", "s", "t", "v", "z", "k", "p"}
	// coinedEnds make coined words look like brands: Nestavo, Lactéo.
	coinedEnds = []string{"a", "o", "ia", "ex", "on", "ix", "ina", "eo", "ara", "ella", "us", "é", "ique", "ora", "is", "um"}
)

// Product vocabulary per category. Each noun starts with a tag saying how
// its net content is measured (see measures): "s:Muesli" is sold by weight,
// "l:Whole Milk" by volume, "1:Toaster" as one piece.
type catWords struct {
	adjectives []string
	nouns      []string
	// local nouns by language; products of a maker of that language use them
	// now and then (without an English adjective), with the language tag of
	// the name claim.
	local map[string][]string
	gpc   []string // GPC brick codes (8 digits) of the category
}

type unitRange struct {
	unit     string
	min, max int // inclusive, in unit
	step     int
}

// measures maps a noun tag to the net contents it comes in, first choice
// three times as likely as each other.
var measures = map[byte][]unitRange{
	's': {{"g", 100, 1000, 25}, {"g", 50, 500, 10}, {"kg", 1, 2, 1}},   // by weight
	'l': {{"ml", 250, 1000, 50}, {"l", 1, 2, 1}, {"ml", 200, 500, 10}}, // by volume
	'S': {{"g", 5, 250, 5}},                                            // small, by weight
	'L': {{"ml", 15, 500, 5}},                                          // small, by volume
	'c': {{"pcs", 6, 60, 6}},                                           // a pack of many
	't': {{"pcs", 10, 100, 10}},                                        // tablets, plasters
	'1': {{"pcs", 1, 1, 1}, {"pcs", 2, 4, 1}},                          // one piece, now and then a multipack
}

var categories = [numCategories]catWords{
	catFood: {
		adjectives: []string{"Organic", "Classic", "Whole", "Light", "Crunchy", "Smoked", "Roasted", "Fresh",
			"Wholegrain", "Spicy", "Mild", "Creamy", "Traditional", "Farmhouse", "Gluten-Free", "Vegan", "Salted",
			"Sweet", "Premium", "Family"},
		nouns: []string{"s:Oat Flakes", "s:Muesli", "l:Whole Milk", "s:Greek Yogurt", "s:Cheddar", "s:Butter",
			"s:Rye Bread", "s:Pasta Fusilli", "s:Tomato Sauce", "l:Olive Oil", "s:Dark Chocolate", "s:Milk Chocolate",
			"s:Hazelnut Spread", "s:Potato Crisps", "s:Salted Peanuts", "s:Tuna in Brine", "s:Smoked Salmon",
			"s:Basmati Rice", "s:Strawberry Jam", "s:Honey", "s:Granola Bars", "l:Oat Drink", "s:Wheat Flour",
			"s:Sunflower Seeds", "s:Ketchup", "s:Mustard", "s:Pickled Gherkins", "l:Chicken Soup", "s:Frozen Peas",
			"l:Vanilla Ice Cream", "s:Butter Biscuits", "s:Pretzels"},
		local: map[string][]string{
			"de": {"l:Vollmilch", "s:Roggenbrot", "s:Haferflocken", "s:Senf", "s:Sauerkraut", "s:Butterkekse", "s:Brezeln", "s:Bergkäse", "s:Leberwurst"},
			"fr": {"s:Camembert", "s:Crème fraîche", "s:Pâté de campagne", "s:Confiture d'abricots", "s:Galettes bretonnes", "s:Moutarde de Dijon", "s:Petits beurre"},
			"it": {"s:Fusilli", "s:Passata di pomodoro", "s:Parmigiano Reggiano", "l:Olio extravergine di oliva", "s:Grissini", "s:Pesto alla genovese", "s:Cantucci"},
			"es": {"l:Aceite de oliva virgen extra", "s:Jamón serrano", "s:Turrón", "s:Atún en aceite", "l:Gazpacho", "s:Chorizo", "s:Queso manchego"},
			"nl": {"s:Hagelslag", "s:Stroopwafels", "s:Goudse kaas", "s:Pindakaas", "s:Ontbijtkoek"},
			"sv": {"s:Knäckebröd", "s:Lingonsylt", "l:Filmjölk", "s:Kanelbullar"},
		},
		gpc: []string{"10000025", "10000043", "10000111", "10000159", "10000205", "10000283", "10000304", "10000381", "10000458", "10000512"},
	},
	catBeverage: {
		adjectives: []string{"Sparkling", "Still", "Cold Brew", "Classic", "Zero Sugar", "Pale", "Dark", "Single Origin",
			"Organic", "Premium", "Light", "Craft", "Aged", "Fresh", "Spiced"},
		nouns: []string{"l:Mineral Water", "l:Orange Juice", "l:Apple Juice", "l:Lemonade", "l:Cola", "l:Lager", "l:Pale Ale",
			"l:Wheat Beer", "l:Red Wine", "l:White Wine", "l:Gin", "l:Whisky", "S:Green Tea", "S:Black Tea", "s:Espresso Beans",
			"s:Ground Coffee", "l:Iced Tea", "l:Energy Drink", "l:Kombucha", "l:Tonic Water", "l:Cider"},
		local: map[string][]string{
			"de": {"l:Weißbier", "l:Apfelschorle", "l:Pils", "l:Kräuterlikör"},
			"fr": {"l:Eau minérale", "l:Jus de pomme", "l:Cidre brut", "l:Vin rouge"},
			"it": {"l:Acqua frizzante", "s:Caffè macinato", "l:Limoncello", "l:Vino rosso"},
		},
		gpc: []string{"10000232", "10000233", "10000142", "10000143", "10000588", "10000591", "10000115", "10000116"},
	},
	catHealth: {
		adjectives: []string{"Extra Strength", "Children's", "Fast Relief", "Daily", "Sugar-Free", "Sensitive",
			"Long-Lasting", "Hypoallergenic", "Advanced", "Gentle"},
		nouns: []string{"t:Paracetamol Tablets 500 mg", "t:Ibuprofen Capsules 200 mg", "L:Vitamin D3 Drops",
			"t:Vitamin C Effervescent Tablets", "t:Throat Lozenges", "L:Nasal Spray", "S:Antiseptic Cream", "t:Plasters",
			"1:Elastic Bandage", "1:Digital Thermometer", "t:Magnesium Tablets", "t:Allergy Relief Tablets", "L:Eye Drops",
			"L:Cough Syrup", "t:Probiotic Capsules"},
		gpc: []string{"10000301", "10000302", "10000433", "10000438", "10000672", "10000675"},
	},
	catCosmetics: {
		adjectives: []string{"Moisturising", "Sensitive", "Fresh", "Volume", "Repair", "Natural", "Men's",
			"Anti-Ageing", "Unscented", "Hydrating", "Mineral"},
		nouns: []string{"L:Shampoo", "L:Conditioner", "L:Shower Gel", "L:Hand Cream", "L:Face Cream", "S:Lip Balm",
			"L:Deodorant Spray", "L:Sun Lotion SPF 30", "L:Toothpaste", "L:Body Lotion", "S:Soap Bar", "L:Hair Serum",
			"L:Micellar Water", "L:Foundation", "L:Mascara"},
		gpc: []string{"10000458", "10000461", "10000462", "10000470", "10000478", "10000480"},
	},
	catHousehold: {
		adjectives: []string{"Concentrated", "Eco", "Lemon", "Fragrance-Free", "Ultra", "Lavender", "Extra Soft",
			"Heavy Duty", "Recycled", "Original"},
		nouns: []string{"c:Dishwasher Tablets", "l:Laundry Detergent", "l:All-Purpose Cleaner", "c:Toilet Paper Rolls",
			"c:Kitchen Towel Rolls", "c:Bin Bags", "l:Fabric Softener", "l:Glass Cleaner", "s:Cat Litter", "s:Dry Dog Food",
			"s:Cat Food Pouches", "c:Sponges", "1:Aluminium Foil 30 m", "1:Baking Paper 10 m", "c:Freezer Bags"},
		gpc: []string{"10000351", "10000352", "10000364", "10000372", "10000597", "10000605"},
	},
	catTextile: {
		adjectives: []string{"Merino", "Organic Cotton", "Slim Fit", "Waterproof", "Lightweight", "Thermal",
			"Classic", "Stretch", "Recycled", "Quilted", "Linen"},
		nouns: []string{"1:T-Shirt", "1:Hiking Socks", "1:Rain Jacket", "1:Fleece Pullover", "1:Chinos", "1:Running Shorts",
			"1:Wool Scarf", "1:Beanie", "1:Bath Towel", "1:Bed Linen Set", "1:Sneakers", "1:Leather Belt", "1:Hoodie", "1:Polo Shirt"},
		gpc: []string{"10001329", "10001330", "10001341", "10001356", "10001370", "10001068"},
	},
	catElectronics: {
		adjectives: []string{"Wireless", "Portable", "Smart", "Compact", "Rechargeable", "Noise-Cancelling",
			"LED", "USB-C", "4K", "Energy-Saving"},
		nouns: []string{"1:Headphones", "1:Bluetooth Speaker", "1:Power Bank 10000 mAh", "1:Desk Lamp", "1:Electric Kettle",
			"1:Toaster", "1:Hair Dryer", "1:Phone Charger", "1:Smoke Detector", "1:Light Bulb E27", "1:Kitchen Scale",
			"1:Coffee Grinder", "1:Action Camera", "1:Binoculars 10x42", "1:Extension Cable"},
		gpc: []string{"10001153", "10001154", "10001165", "10001172", "10001185", "10001202"},
	},
	catHardgoods: {
		adjectives: []string{"Cordless", "Stainless", "Folding", "Solid Oak", "Heavy-Duty", "Kids'", "Ergonomic",
			"Weatherproof", "Classic", "Magnetic"},
		nouns: []string{"1:Screwdriver Set", "1:Cordless Drill", "1:Garden Hose 25 m", "1:Wooden Puzzle", "1:Building Blocks",
			"1:Camping Chair", "1:Bookshelf", "1:Frying Pan 28 cm", "1:Chef's Knife", "1:Tape Measure 5 m", "1:Plant Pot",
			"1:Board Game", "1:Bicycle Lock", "1:Storage Box", "1:Torch"},
		gpc: []string{"10002162", "10002165", "10001434", "10001437", "10003241", "10003258"},
	},
}

// Origins products claim besides their maker's own country.
var originCountries = []string{"DE", "FR", "IT", "ES", "NL", "BE", "PL", "CN", "VN", "IN", "TR", "US", "MX",
	"BR", "TH", "BD", "PT", "GB", "CH", "AT", "SE", "JP", "KR", "MA", "CZ"}

var allergenList = []string{"gluten", "milk", "eggs", "nuts", "peanuts", "soybeans", "celery", "mustard",
	"sesame", "fish", "crustaceans", "molluscs", "lupin", "sulphites"}

var packagingMaterials = []string{"PET", "HDPE", "glass", "cardboard", "aluminium", "steel", "paper",
	"PP", "LDPE", "composite carton", "tinplate"}

var recyclability = []string{"recyclable", "partially_recyclable", "not_recyclable", "recyclable_where_facilities_exist"}

var materials = []string{"100% cotton", "95% cotton, 5% elastane", "80% merino wool, 20% polyamide",
	"100% recycled polyester", "60% cotton, 40% polyester", "100% linen", "70% wool, 30% nylon",
	"ABS plastic", "stainless steel", "beech wood", "aluminium", "glass", "solid oak", "polypropylene"}

var colours = []string{"black", "white", "navy", "grey", "red", "forest green", "blue", "beige", "charcoal", "olive", "sand"}

var energyClasses = []string{"A", "B", "C", "D", "E", "F", "G"}

var dosageForms = []string{"tablet", "capsule", "syrup", "drops", "spray", "cream", "lozenge", "powder"}

var activeIngredients = []string{"paracetamol", "ibuprofen", "cholecalciferol", "ascorbic acid", "xylometazoline",
	"chlorhexidine", "magnesium citrate", "cetirizine", "dextromethorphan", "lactobacillus rhamnosus"}

// Retail categories the tenant upload files products under.
var retailerCategories = []string{"Dairy & Eggs", "Bakery", "Pantry", "Snacks & Sweets", "Drinks", "Health",
	"Beauty", "Household", "Clothing", "Electronics", "Home & Garden", "Dairy alternatives", "Frozen"}

var statuses = []string{"active", "discontinued", "withdrawn"}
